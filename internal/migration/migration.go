// Package migration applies the versioned schema migrations (generated from
// the ent schema by `make migration`) with Atlas's executor. The files are
// embedded, so the one binary migrates any database it is pointed at.
package migration

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/postgres"
	"ariga.io/atlas/sql/schema"
	"ariga.io/atlas/sql/sqlite"
)

//go:embed sqlite/*.sql sqlite/atlas.sum postgres/*.sql postgres/atlas.sum
var files embed.FS

// lockName serialises migrations of replicas that start together (PostgreSQL
// advisory lock).
const lockName = "itemsvc_migrate"

// Dir returns the embedded migration directory of a dialect.
func Dir(dialect string) (migrate.Dir, error) {
	entries, err := fs.ReadDir(files, dialect)
	if err != nil {
		return nil, fmt.Errorf("no migrations for %s: %w", dialect, err)
	}
	dir := &migrate.MemDir{}
	for _, e := range entries {
		data, err := files.ReadFile(path.Join(dialect, e.Name()))
		if err != nil {
			return nil, err
		}
		if err := dir.WriteFile(e.Name(), data); err != nil {
			return nil, err
		}
	}
	return dir, nil
}

// Apply brings the database up to the newest migration and returns how many
// files it applied; a database already up to date applies none.
func Apply(ctx context.Context, db *sql.DB, dialect string) (int, error) {
	dir, err := Dir(dialect)
	if err != nil {
		return 0, err
	}
	return ApplyDir(ctx, db, dialect, dir)
}

// ApplyDir is Apply with another directory than the embedded one, such as a
// first part of it, to test a migration against data written before it.
func ApplyDir(ctx context.Context, db *sql.DB, dialect string, dir migrate.Dir) (int, error) {
	// One connection for the whole run: SQLite's foreign-key pragma and
	// PostgreSQL's advisory lock both belong to a session.
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()

	var drv migrate.Driver
	switch dialect {
	case "sqlite":
		drv, err = sqlite.Open(conn)
	case "postgres":
		drv, err = postgres.Open(conn)
	default:
		err = fmt.Errorf("unknown dialect %q", dialect)
	}
	if err != nil {
		return 0, fmt.Errorf("open migration driver: %w", err)
	}
	if l, ok := drv.(schema.Locker); ok && dialect == "postgres" {
		unlock, err := l.Lock(ctx, lockName, time.Minute)
		if err != nil {
			return 0, fmt.Errorf("take migration lock: %w", err)
		}
		defer unlock() //nolint:errcheck // the session ends with the connection anyway
	}

	revs := &revisions{conn: conn, dialect: dialect}
	if err := revs.init(ctx); err != nil {
		return 0, err
	}
	// The database may hold other schemas (PostgreSQL) or tables of other
	// tools; the migrations only create what they own, so a "dirty" start is
	// fine and the clean check is skipped altogether (it inspects every
	// schema of the database, which races with schemas being dropped).
	ex, err := migrate.NewExecutor(dirtyOK{drv}, dir, revs, migrate.WithAllowDirty(true))
	if err != nil {
		return 0, fmt.Errorf("migration executor: %w", err)
	}
	pending, err := ex.Pending(ctx)
	if errors.Is(err, migrate.ErrNoPendingFiles) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pending migrations: %w", err)
	}
	for _, f := range pending {
		if err := ex.Execute(ctx, f); err != nil {
			return 0, fmt.Errorf("apply %s: %w", f.Name(), err)
		}
	}
	return len(pending), nil
}

// dirtyOK is a migration driver that does not inspect the database to
// decide whether it is empty before the first migration.
type dirtyOK struct{ migrate.Driver }

// CheckClean reports every database as acceptable.
func (dirtyOK) CheckClean(context.Context, *migrate.TableIdent) error { return nil }
