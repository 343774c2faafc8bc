// Package database opens the store behind the ent client: embedded SQLite by
// default, PostgreSQL (through pgx) in production.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/acme/itemsvc/ent"
	_ "github.com/acme/itemsvc/ent/runtime" // schema defaults, hooks and policies
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/migration"
)

// DB is an open database: the ent client and the pool under it.
type DB struct {
	Client  *ent.Client
	SQL     *sql.DB
	Dialect string // "sqlite" or "postgres"

	file   string         // SQLite's database file; empty in memory and on PostgreSQL
	lock   *os.File       // SQLite file: its shared flock, held until Close (lock_unix.go)
	driver dialect.Driver // under Client
	health *writeHealth
	gate   *writeGate    // SQLite: queues and batches the writers
	ckpt   *checkpointer // SQLite file: keeps the write-ahead log short
}

// Open connects to the database named by rawURL (DATABASE_URL) and checks
// that it answers; a PostgreSQL pool holds up to DefaultMaxConns
// connections (OpenWith sets it).
func Open(ctx context.Context, rawURL string) (*DB, error) {
	return OpenWith(ctx, rawURL, DefaultMaxConns)
}

// DefaultMaxConns is the PostgreSQL pool's size unless DATABASE_MAX_CONNS
// says otherwise.
const DefaultMaxConns = 20

// OpenWith is Open with a PostgreSQL pool of maxConns connections
// (DATABASE_MAX_CONNS); SQLite sizes its own pool (openSQLite).
func OpenWith(ctx context.Context, rawURL string, maxConns int) (*DB, error) {
	return OpenVia(ctx, rawURL, maxConns, nil)
}

// Opener opens the pool over a registered driver, as sql.Open does; tracing
// passes one that wraps the driver, so that every statement is a span.
type Opener func(driverName, dsn string) (*sql.DB, error)

// OpenVia is OpenWith with the pool opened by open (nil: sql.Open).
func OpenVia(ctx context.Context, rawURL string, maxConns int, open Opener) (*DB, error) {
	dialectName, dsn, err := config.ParseDatabaseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if open == nil {
		open = sql.Open
	}
	var db *sql.DB
	var gate *writeGate
	health := &writeHealth{}
	switch dialectName {
	case "sqlite":
		db, err = openSQLite(dsn, open)
	case "postgres":
		db, err = openPostgres(dsn, maxConns, open)
	}
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", dialectName, err)
	}
	var drv dialect.Driver = entsql.OpenDB(dialect.Postgres, db)
	if dialectName == "sqlite" {
		drv = newPreparedReads(entsql.OpenDB(dialect.SQLite, db), db)
	}
	var ckpt *checkpointer
	var file string
	var lock *os.File
	if dialectName == "sqlite" {
		gate = newWriteGate()
		if dsn != ":memory:" {
			if lock, err = lockShared(dsn); err != nil {
				db.Close()
				return nil, err
			}
			if ckpt, err = startCheckpointer(dsn, gate); err != nil {
				db.Close()
				lock.Close()
				return nil, err
			}
			file = dsn
		}
	}
	drv = writeWatch{Driver: drv, health: health, gate: gate}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: db, Dialect: dialectName, file: file, lock: lock, driver: drv, health: health, ckpt: ckpt, gate: gate}, nil
}

// Migrate applies pending migrations and returns how many it applied.
func (d *DB) Migrate(ctx context.Context) (int, error) {
	return migration.Apply(ctx, d.SQL, d.Dialect)
}

// Close stops the checkpoints and closes the client and its pool.
func (d *DB) Close() error {
	var err error
	if d.ckpt != nil {
		err = d.ckpt.close()
	}
	err = errors.Join(d.Client.Close(), err)
	if d.lock != nil {
		d.lock.Close() // after the pool: a restore may replace the file now
	}
	return err
}

// pageCacheKiB is each connection's page cache (cache_size), in KiB. The
// driver allocates the cache outside the Go heap, where a cached page takes
// twice its size, and at SQLite's default a deep OFFSET page that filled
// every connection's cache raised the process's resident memory for good
// (docs/configuration.md, SQLite, has the figures).
// The cache outlives no write anyway (in WAL mode a connection drops it when
// another commits), and what a small one misses comes from the OS's file
// cache.
const pageCacheKiB = 512

// openSQLite opens a database file (created with its folder if missing) in
// WAL mode, so that readers never wait for the writer and the CLI can write
// while the server runs. Write transactions take the lock up front
// (_txlock=immediate) and wait up to busy_timeout for it, instead of failing
// with SQLITE_BUSY when two writers meet. Checkpoints run in the background
// (writer.go), not in the commits of requests.
func openSQLite(path string, open Opener) (*sql.DB, error) {
	memory := path == ":memory:"
	if !memory {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("create database folder: %w", err)
			}
		}
	}
	dsn := sqliteDSN(path, busyTimeout)
	db, err := open(sqliteDriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if memory {
		// Each connection to :memory: is its own empty database.
		db.SetMaxOpenConns(1)
	} else {
		// The driver is pure Go: a query keeps its goroutine on a CPU, so
		// connections beyond a couple per CPU only add page caches and
		// contention. make bench, server on one CPU: 8 -> 4
		// connections took list from 0.77 to 0.91 and get from 0.58 to
		// 0.65 of the reference.
		n := max(4, 2*runtime.GOMAXPROCS(0))
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// busyTimeout is how long a connection waits for a lock that another holds
// (busy_timeout).
const busyTimeout = 10 * time.Second

// sqliteDSN is the driver's name for the database file at path (or
// ":memory:") with the connection settings above, waiting up to busy for
// locks.
func sqliteDSN(path string, busy time.Duration) string {
	params := url.Values{}
	for _, p := range []string{"foreign_keys(1)", "journal_mode(WAL)", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()), "synchronous(NORMAL)",
		"wal_autocheckpoint(0)", fmt.Sprintf("journal_size_limit(%d)", journalSizeLimit),
		fmt.Sprintf("cache_size(-%d)", pageCacheKiB), "temp_store(MEMORY)"} {
		params.Add("_pragma", p)
	}
	params.Set("_txlock", "immediate")
	if path == ":memory:" {
		return "file::memory:?" + params.Encode()
	}
	return "file:" + path + "?" + params.Encode()
}

// openPostgres opens a pool of up to maxConns connections, all of them kept
// when idle (until ConnMaxIdleTime): with fewer kept, a burst of requests
// closes the connections it returns past that number and opens new ones
// (a PostgreSQL process each, several round trips) for the next. Writers no longer wait for each other to commit (the event order,
// ent/schema/itemevents.go), so a request holds its connection for its own
// round trips only: over a slow link more connections carry more writes.
func openPostgres(dsn string, maxConns int, open Opener) (*sql.DB, error) {
	db, err := open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(time.Hour)
	return db, nil
}
