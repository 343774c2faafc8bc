// Package migration applies the versioned schema migrations (generated from
// the ent schema by `make migration`). The files are embedded, so the one
// binary migrates any database it is pointed at.
//
// The files and their atlas.sum are Atlas's format, and `make migration`
// writes them with Atlas; applying them needs none of it. Atlas's executor
// linked its schema inspectors and differs for every dialect into the
// server, so this package applies the files itself: it checks atlas.sum,
// runs each pending file in one transaction, and records it in
// schema_revisions as Atlas did (databases migrated before carry on).
package migration

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"strings"
	"time"
)

//go:embed sqlite/*.sql sqlite/atlas.sum postgres/*.sql postgres/atlas.sum
var files embed.FS

// lockName serialises migrations of replicas that start together (PostgreSQL
// advisory lock, with the key Atlas derived from it).
const lockName = "itemsvc_migrate"

// lockTimeout bounds the wait for another replica's migration.
const lockTimeout = time.Minute

// File is one migration: its name (VERSION_description.sql) and statements.
type File struct {
	Name string
	SQL  []byte
}

// Version is the part of the name before the first underscore.
func (f File) Version() string {
	v, _, _ := strings.Cut(strings.TrimSuffix(f.Name, ".sql"), "_")
	return v
}

// Description is the part of the name after the version.
func (f File) Description() string {
	_, d, _ := strings.Cut(strings.TrimSuffix(f.Name, ".sql"), "_")
	return d
}

// Files returns the embedded migrations of a dialect in version order, after
// checking them against the directory's atlas.sum.
func Files(dialect string) ([]File, error) {
	entries, err := fs.ReadDir(files, dialect)
	if err != nil {
		return nil, fmt.Errorf("no migrations for %s: %w", dialect, err)
	}
	var out []File
	var sum []byte
	for _, e := range entries { // ReadDir sorts by name
		data, err := files.ReadFile(path.Join(dialect, e.Name()))
		if err != nil {
			return nil, err
		}
		switch {
		case e.Name() == "atlas.sum":
			sum = data
		case strings.HasSuffix(e.Name(), ".sql"):
			out = append(out, File{Name: e.Name(), SQL: data})
		}
	}
	if err := checkSum(out, sum); err != nil {
		return nil, fmt.Errorf("%s migrations: %w", dialect, err)
	}
	return out, nil
}

// Apply brings the database up to the newest migration and returns how many
// files it applied; a database already up to date applies none.
func Apply(ctx context.Context, db *sql.DB, dialect string) (int, error) {
	list, err := Files(dialect)
	if err != nil {
		return 0, err
	}
	return ApplyFiles(ctx, db, dialect, list)
}

// ApplyFiles is Apply with other files than the embedded ones, such as the
// first of them, to test a migration against data written before it.
func ApplyFiles(ctx context.Context, db *sql.DB, dialect string, list []File) (int, error) {
	if dialect != "sqlite" && dialect != "postgres" {
		return 0, fmt.Errorf("unknown dialect %q", dialect)
	}
	// One connection for the whole run: SQLite's foreign-key pragma and
	// PostgreSQL's advisory lock both belong to a session.
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()

	if dialect == "postgres" {
		h := fnv.New32()
		h.Write([]byte(lockName))
		key := h.Sum32()
		lockCtx, cancel := context.WithTimeout(ctx, lockTimeout)
		_, err := conn.ExecContext(lockCtx, "SELECT pg_advisory_lock($1)", key)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key) //nolint:errcheck // the session ends with the connection anyway
	}

	revs := &revisions{conn: conn, dialect: dialect}
	if err := revs.init(ctx); err != nil {
		return 0, err
	}
	applied, err := revs.read(ctx)
	if err != nil {
		return 0, err
	}
	done := make(map[string]bool, len(applied))
	for _, r := range applied {
		if r.Error != "" || r.Applied < r.Total {
			return 0, fmt.Errorf("migration %s was left half applied (%d of %d statements: %s); repair the database by hand and delete its row from %s",
				r.Version, r.Applied, r.Total, r.Error, revisionsTable)
		}
		done[r.Version] = true
	}
	sums := sumLines(list)
	n := 0
	for i, f := range list {
		if done[f.Version()] {
			continue
		}
		if err := applyFile(ctx, conn, dialect, revs, f, sums[i]); errors.Is(err, errAppliedMeanwhile) {
			continue
		} else if err != nil {
			return n, fmt.Errorf("apply %s: %w", f.Name, err)
		}
		n++
	}
	return n, nil
}

// errAppliedMeanwhile is applyFile's answer for a file another process
// applied since the revisions were read.
var errAppliedMeanwhile = errors.New("applied meanwhile by another process")

// applyFile runs one file and records it, in one transaction: a file applies
// entirely or not at all. SQLite ignores the foreign-key pragma inside a
// transaction, so it is set around it (a table rebuild drops a table that
// others reference), and the keys are checked before the commit instead.
func applyFile(ctx context.Context, conn *sql.Conn, dialect string, revs *revisions, f File, hash string) (err error) {
	if dialect == "sqlite" {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = off"); err != nil {
			return err
		}
		defer func() {
			if _, e := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = on"); e != nil && err == nil {
				err = e
			}
		}()
	}
	start := time.Now()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after a commit, a no-op
	if dialect == "sqlite" {
		// Another process starting on the same file (no advisory lock
		// here) may have applied it since the revisions were read; the
		// transaction holds SQLite's write lock from its start (BEGIN
		// IMMEDIATE), so what it reads now stays true until it commits.
		var recorded int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+revisionsTable+` WHERE version = ?`, f.Version()).Scan(&recorded); err != nil {
			return fmt.Errorf("read revisions: %w", err)
		}
		if recorded > 0 {
			return errAppliedMeanwhile
		}
	}
	if _, err := tx.ExecContext(ctx, string(f.SQL)); err != nil {
		return err
	}
	if dialect == "sqlite" {
		var violations int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_foreign_key_check").Scan(&violations); err != nil {
			return fmt.Errorf("check foreign keys: %w", err)
		}
		if violations > 0 {
			return fmt.Errorf("%d rows break foreign keys", violations)
		}
	}
	rev := &revision{
		Version: f.Version(), Description: f.Description(), Type: revisionTypeExecute,
		Applied: 1, Total: 1, ExecutedAt: start.UTC(), ExecutionTime: time.Since(start),
		Hash: hash, OperatorVersion: "itemsvc",
	}
	if err := revs.write(ctx, tx, rev); err != nil {
		return err
	}
	return tx.Commit()
}

// Pending returns how many of the embedded migrations the database has not
// applied, changing nothing: a server told not to migrate (MIGRATE_ON_START
// false) checks that the migration job has run before it serves.
func Pending(ctx context.Context, db *sql.DB, dialect string) (int, error) {
	list, err := Files(dialect)
	if err != nil {
		return 0, err
	}
	exists := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '` + revisionsTable + `'`
	if dialect == "postgres" {
		exists = `SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = '` + revisionsTable + `'`
	}
	var n int
	if err := db.QueryRowContext(ctx, exists).Scan(&n); err != nil {
		return 0, fmt.Errorf("look for %s: %w", revisionsTable, err)
	}
	if n == 0 {
		return len(list), nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	applied, err := (&revisions{conn: conn, dialect: dialect}).read(ctx)
	if err != nil {
		return 0, err
	}
	done := make(map[string]bool, len(applied))
	for _, r := range applied {
		done[r.Version] = r.Error == "" && r.Applied == r.Total
	}
	pending := 0
	for _, f := range list {
		if !done[f.Version()] {
			pending++
		}
	}
	return pending, nil
}
