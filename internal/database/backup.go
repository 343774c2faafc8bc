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
	if err := folderExists(dest); err != nil {
		return fmt.Errorf("backup: %w", err)
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
// src, which must be a sound itemsvc database (a Backup). src is a file
// name, never read as an SQLite URI ("t.db?x" is the file so named). It is
// copied beside the database first, the copy is checked, and only the
// checked copy is renamed into place: what is installed is what passed the
// check, whatever happens to src meanwhile. It is refused (ErrInUse) while
// a server or another command has the database open: the server holds a
// shared lock on the file for as long as it runs (lock.go). The database's
// write-ahead log goes with the old file.
func Restore(ctx context.Context, rawURL, src string) (err error) {
	path, err := sqliteFile(rawURL)
	if err != nil {
		return err
	}
	if same(path, src) {
		return errors.New("restore: the copy is the database itself")
	}
	// Refuse what is no database before anything is written.
	if err := sqliteHeader(src); err != nil {
		return fmt.Errorf("restore: %s: %w", src, err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("restore: create database folder: %w", err)
		}
	}
	_, statErr := os.Stat(path)
	unlock, err := lockExclusive(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlock()
	if statErr != nil {
		// The lock made an empty file where there was no database: a
		// failed restore leaves none.
		defer func() {
			if err != nil {
				os.Remove(path)
			}
		}()
	}
	tmp, err := tempBeside(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(tmp)
	if err := copyFile(src, tmp, 0o600); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	err = check(ctx, tmp)
	for _, side := range []string{tmp + "-wal", tmp + "-shm"} {
		os.Remove(side) // what opening the copy may have left
	}
	if err != nil {
		return fmt.Errorf("restore: %s: %w", src, err)
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

// sqliteHeader checks that the file path begins as every SQLite database
// does.
func sqliteHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != "SQLite format 3\x00" {
		return errors.New("not an SQLite database")
	}
	return nil
}

// folderExists says, naming it, when the folder dest is to be written in
// does not exist: a backup creates no folders.
func folderExists(dest string) error {
	dir := filepath.Dir(dest)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the folder %s does not exist; create it first", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// fileURI is the read-only SQLite URI of the file path: the path made
// absolute and its '%', '?' and '#' escaped, so that SQLite opens the file
// so named and reads nothing of the name as parameters.
func fileURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	return "file:" + esc + "?mode=ro", nil
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
	uri, err := fileURI(path)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
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
