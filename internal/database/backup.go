package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acme/itemsvc/internal/config"
)

// ErrNotSQLite is the error of a backup or restore of a PostgreSQL
// database: its own tools do that, consistently and while it serves.
var ErrNotSQLite = errors.New("DATABASE_URL is PostgreSQL: back it up with pg_dump and put it back with pg_restore; " +
	"server backup and server restore copy the embedded SQLite database only")

// ErrInUse is the error of a restore while a server (or another command)
// has the database open.
var ErrInUse = errors.New("a server or another command has the database open; stop it, then restore")

// Backup writes a consistent copy of the SQLite database that rawURL names
// to dest, while servers keep reading and writing it. The copy is SQLite's
// VACUUM INTO, run in one read transaction: it holds every transaction
// committed before it began, those still in the write-ahead log included,
// and none after; writers are not held up. It is written beside dest and
// renamed into place once its integrity check passes, so dest is never a
// half-written file.
func Backup(ctx context.Context, rawURL, dest string) error {
	path, err := sqliteFile(rawURL)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: no database at %s: %w", path, err)
	}
	if same(path, dest) {
		return errors.New("backup: the destination is the database itself")
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, busyTimeout))
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", path, err)
	}
	defer db.Close()
	tmp, err := tempBeside(dest)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return fmt.Errorf("backup: copy %s: %w", path, err)
	}
	if err := check(ctx, tmp); err != nil {
		return fmt.Errorf("backup: the copy: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(filepath.Dir(dest))
}

// Restore replaces the SQLite database that rawURL names with the copy at
// src, which must be a sound itemsvc database (a Backup). It is refused
// (ErrInUse) while a server or another command has the database open: the
// server holds a shared lock on the file for as long as it runs (lock.go).
// The database's write-ahead log goes with the old file.
func Restore(ctx context.Context, rawURL, src string) error {
	path, err := sqliteFile(rawURL)
	if err != nil {
		return err
	}
	if same(path, src) {
		return errors.New("restore: the copy is the database itself")
	}
	if err := check(ctx, src); err != nil {
		return fmt.Errorf("restore: %s: %w", src, err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("restore: create database folder: %w", err)
		}
	}
	unlock, err := lockExclusive(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlock()
	tmp, err := tempBeside(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(tmp)
	if err := copyFile(src, tmp, 0o600); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// sqliteFile is the database file rawURL names, or ErrNotSQLite.
func sqliteFile(rawURL string) (string, error) {
	dialect, path, err := config.ParseDatabaseURL(rawURL)
	switch {
	case err != nil:
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	case dialect != "sqlite":
		return "", ErrNotSQLite
	case path == ":memory:":
		return "", errors.New("DATABASE_URL is an in-memory database: there is nothing to back up or restore")
	}
	return path, nil
}

// check opens an SQLite file read-only and runs its integrity check; the
// file must also hold this server's migrations table.
func check(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&result); err != nil {
		return fmt.Errorf("not an SQLite database: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("integrity check failed: %s", result)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_revisions'").Scan(&n); err != nil || n == 0 {
		return errors.New("not an itemsvc database (no schema_revisions table)")
	}
	return nil
}

// same reports whether two paths name one file.
func same(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// tempBeside names a file that does not exist yet in dest's folder, so that
// a rename can put it in dest's place.
func tempBeside(dest string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dest), "."+strings.TrimPrefix(filepath.Base(dest), ".")+".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	return name, os.Remove(name) // VACUUM INTO wants to create it
}

// CopyFile copies src to dest with mode perm, synced, through a file beside
// dest renamed into place.
func CopyFile(src, dest string, perm os.FileMode) error {
	tmp, err := tempBeside(dest)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := copyFile(src, tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}

func copyFile(src, dest string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // not every file system syncs a folder; the rename stands
	return nil
}
