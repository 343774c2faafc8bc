package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// SQLite takes one writer at a time. Without a queue in the process, writers
// that meet wait in SQLite's busy handler, which sleeps in growing steps (up
// to 100 ms) and checks again: under load a PUT waited for a lock that had
// long been free, and its p99 was 5 to 10 times the lean reference's. The
// gate queues this process's writers in Go instead, so the next one starts as
// soon as the previous commits; busy_timeout still covers other processes
// (the CLI) writing to the same file.
type writeGate struct{ ch chan struct{} }

// gateTimeout bounds a wait for the gate like busy_timeout bounds a wait for
// the lock: a writer that cannot start within it fails instead of hanging.
const gateTimeout = 10 * time.Second

// errGateTimeout is the error of a writer that waited gateTimeout in vain.
var errGateTimeout = errors.New("database is locked: waited too long for the writer")

func newWriteGate() *writeGate { return &writeGate{ch: make(chan struct{}, 1)} }

// acquire waits for the gate; release must follow exactly once.
func (g *writeGate) acquire(ctx context.Context) error {
	select {
	case g.ch <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(gateTimeout)
	defer t.Stop()
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errGateTimeout
	}
}

func (g *writeGate) release() { <-g.ch }

// WAL upkeep. SQLite's automatic checkpoint runs inside the commit that
// crosses 1000 pages, so a request paid for it; and while readers kept
// using the log it could not start over, so the file grew (109 MB beside a
// 92 MB database after a minute of mixed load) and kept that size. The
// connections turn the automatic checkpoint off (wal_autocheckpoint(0)) and
// a background loop checkpoints instead, between two writes: a checkpoint
// that no write runs beside copies the whole log, so that the next write
// starts it over. (Passive checkpoints beside the writes never caught up
// with the last commit under load, and the log grew until a truncation
// stopped the writers for as long as copying the backlog took: PUT p99 ten
// times the reference's.)
const (
	// checkpointEvery is how often the loop copies the log into the
	// database; under steady writes a round copies what about 100 writes
	// added, like SQLite's own 1000-page checkpoints.
	checkpointEvery = 50 * time.Millisecond
	// truncateAbove is the log file size past which the round also waits for
	// readers to leave the log and truncates it (readers kept it from
	// starting over).
	truncateAbove = 32 << 20
	// journalSizeLimit is what SQLite truncates the log to when it starts
	// over from its beginning (journal_size_limit).
	journalSizeLimit = 16 << 20
)

// checkpointer keeps the write-ahead log of one SQLite file short.
type checkpointer struct {
	db   *sql.DB
	gate *writeGate
	wal  string // path of the log file
	max  int64  // truncateAbove
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func startCheckpointer(db *sql.DB, gate *writeGate, path string) *checkpointer {
	c := &checkpointer{db: db, gate: gate, wal: path + "-wal", max: truncateAbove, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if err := c.checkpoint(context.Background()); err != nil {
			slog.Warn("sqlite checkpoint", "err", err)
		}
	}
}

// checkpoint copies the log into the database between two writes
// (PASSIVE, with this process's writers held at the gate: a write waits for
// it as it would for another write), and truncates a log file grown past
// c.max.
func (c *checkpointer) checkpoint(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.gate.acquire(ctx); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer c.gate.release()
	var busy, frames, copied int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("passive: %w", err)
	}
	if st, err := os.Stat(c.wal); err != nil || st.Size() <= c.max {
		return nil
	}
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	return nil
}

// close stops the loop and waits for it.
func (c *checkpointer) close() {
	c.once.Do(func() {
		close(c.stop)
		<-c.done
	})
}
