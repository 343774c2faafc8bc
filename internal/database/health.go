package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"github.com/acme/itemsvc/internal/apperr"
)

// writeHealth remembers whether the last write failed for want of storage.
// A ping cannot tell: a full disk still answers reads.
type writeHealth struct{ failing atomic.Bool }

func (h *writeHealth) note(err error) {
	if err != nil && apperr.IsStorage(err) {
		h.failing.Store(true)
	}
}

// probeSize is what the readiness probe writes: more than a page, so that
// the write needs new space (a full disk has none), as real writes do.
const probeSize = 16 << 10

// Ready reports whether the database can serve: it must answer, and after a
// write failed for want of storage, a probe write of probeSize bytes must
// succeed again. Only then does readiness write anything, so a healthy
// server's probes are reads.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.SQL.PingContext(ctx); err != nil {
		return err
	}
	if !d.health.failing.Load() {
		return nil
	}
	if err := d.probeDisk(); err != nil {
		return apperr.Storage(fmt.Errorf("readiness probe: %w", err))
	}
	query := "INSERT INTO settings (id, created_at, updated_at, value) VALUES ('readiness_probe', ?, ?, ?) ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, value = excluded.value"
	if d.Dialect == dialect.Postgres {
		query = "INSERT INTO settings (id, created_at, updated_at, value) VALUES ('readiness_probe', $1, $2, $3) ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, value = excluded.value"
	}
	now := time.Now().UTC()
	if _, err := d.SQL.ExecContext(ctx, query, now, now, strings.Repeat("-", probeSize)); err != nil {
		return apperr.Storage(fmt.Errorf("readiness probe write: %w", err))
	}
	d.health.failing.Store(false)
	return nil
}

// probeDisk writes probeSize bytes to a new file beside an SQLite database.
// A write to the database alone does not prove free space there: once the
// write-ahead log is checkpointed, the next writes reuse the log file's
// pages, so a probe row fits on a full disk and the server would call
// itself ready until its log had to grow again.
func (d *DB) probeDisk() error {
	if d.file == "" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(d.file), ".readiness-probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, probeSize))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeWatch is the driver under the ent client: it passes everything
// through and notes writes that fail for want of storage, and commits that
// succeed. On SQLite it also queues transactions and statements outside them
// at the write gate (writer.go), where they join a batch (batch.go).
type writeWatch struct {
	dialect.Driver
	health *writeHealth
	gate   *writeGate // nil: no queue (PostgreSQL)
}

// Exec implements dialect.Driver. On SQLite a statement outside a
// transaction is a batch's member too.
func (w writeWatch) Exec(ctx context.Context, query string, args, v any) error {
	if w.gate == nil {
		err := w.Driver.Exec(ctx, query, args, v)
		w.health.note(err)
		return err
	}
	tx, err := w.join(ctx)
	if err != nil {
		return err
	}
	if err := tx.Exec(ctx, query, args, v); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Tx implements dialect.Driver.
func (w writeWatch) Tx(ctx context.Context) (dialect.Tx, error) {
	if w.gate != nil {
		return w.join(ctx)
	}
	tx, err := w.Driver.Tx(ctx)
	if err != nil {
		w.health.note(err)
		return nil, err
	}
	return watchedTx{Tx: tx, health: w.health}, nil
}

// BeginTx is Tx with options, for ent's Client.BeginTx. SQLite's
// transactions are serializable whatever the options, and join a batch.
func (w writeWatch) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	b, ok := w.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	})
	if !ok || w.gate != nil {
		return w.Tx(ctx)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		w.health.note(err)
		return nil, err
	}
	return watchedTx{Tx: tx, health: w.health}, nil
}

// watchedTx is a PostgreSQL transaction, noting storage failures.
type watchedTx struct {
	dialect.Tx
	health *writeHealth
}

// Exec implements dialect.ExecQuerier.
func (t watchedTx) Exec(ctx context.Context, query string, args, v any) error {
	err := t.Tx.Exec(ctx, query, args, v)
	t.health.note(err)
	return err
}

// ExecContext runs a statement ent has no builder for (the generated
// Tx.ExecContext: PostgreSQL's advisory locks), noting failures like Exec.
func (t watchedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ex, ok := t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	})
	if !ok {
		return nil, errors.New("the transaction runs no raw statements")
	}
	res, err := ex.ExecContext(ctx, query, args...)
	t.health.note(err)
	return res, err
}

// QueryContext runs a statement ent has no builder for that returns rows
// (the generated Client.QueryContext: the event seq's UPDATE … RETURNING),
// noting failures like Exec. Rows are read before anything else runs in the
// transaction, so a failure shows here or at the first Next.
func (t watchedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, ok := t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	})
	if !ok {
		return nil, errors.New("the transaction runs no raw queries")
	}
	rows, err := q.QueryContext(ctx, query, args...)
	t.health.note(err)
	return rows, err
}

// Commit implements driver.Tx: a commit that succeeds proves the database
// writable again.
func (t watchedTx) Commit() error {
	err := t.Tx.Commit()
	if err == nil {
		t.health.failing.Store(false)
	}
	t.health.note(err)
	return err
}
