package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// SQLite takes one writer at a time. Without a queue in the process, writers
// that meet wait in SQLite's busy handler, which sleeps in growing steps and
// checks again: under load a PUT waited for a lock that had long been free,
// and its tail was several times the lean reference's. The
// gate queues this process's writers in Go instead, so the next one starts as
// soon as the previous commits; busy_timeout still covers other processes
// (the CLI) writing to the same file.
type writeGate struct {
	ch chan struct{}
	// writes counts the transactions committed since the last checkpoint
	// (a batch's members each count: batch.go); past
	// checkpointAfter the committing writer passes the gate to the
	// checkpointer over handoff (nil: no checkpointer) instead of
	// releasing it.
	writes  atomic.Int64
	handoff chan struct{}
	closed  atomic.Bool // the checkpointer stopped: no more handoffs

	// Group commit (batch.go). open is the batch the next writer joins;
	// only the gate's holder reads or changes it.
	open    *batch
	window  time.Duration // a batch's longest life; 0: no batching
	waiting atomic.Int32  // writers blocked in acquire
	// committing: a committer (commitSoon) is on its way to the gate.
	committing atomic.Bool
	stats      atomic.Pointer[batchStats] // nil until RegisterMetrics
}

// gateTimeout bounds a wait for the gate like busy_timeout bounds a wait for
// the lock: a writer that cannot start within it fails instead of hanging.
const gateTimeout = 10 * time.Second

// errGateTimeout is the error of a writer that waited gateTimeout in vain.
var errGateTimeout = errors.New("database is locked: waited too long for the writer")

func newWriteGate() *writeGate {
	return &writeGate{ch: make(chan struct{}, 1), window: DefaultBatchWindow}
}

// acquire waits for the gate; release or leave must follow exactly once.
func (g *writeGate) acquire(ctx context.Context) error {
	select {
	case g.ch <- struct{}{}:
		return nil
	default:
	}
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
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

// leave ends a writer's turn; n is how many transactions it committed. The
// writer that brings the commits since the last checkpoint to checkpointAfter hands the
// gate to the checkpointer, which releases it after copying the log: the
// next writers wait for that copy as they would for a write, and the request
// that crossed the bound does not.
func (g *writeGate) leave(n int) {
	if n > 0 && g.writes.Add(int64(n)) >= checkpointAfter && g.handoff != nil && !g.closed.Load() {
		select {
		case g.handoff <- struct{}{}:
			return
		default: // cannot happen while this writer holds the gate
		}
	}
	g.release()
}

// WAL upkeep. SQLite's automatic checkpoint runs inside the commit that
// crosses 1000 pages, so a request paid for it; and while readers kept
// using the log it could not start over, so the file grew past the size of
// the database under a minute of mixed load and kept that size. The
// connections turn the automatic checkpoint off (wal_autocheckpoint(0)) and
// a checkpointer copies the log instead, between two writes: a checkpoint
// that no write runs beside copies the whole log, so that the next write
// starts it over. (Passive checkpoints beside the writes never caught up
// with the last commit under load, and the log grew until a truncation
// stopped the writers for as long as copying the backlog took, and the PUT
// row's tail with it.)
//
// A clock alone did not bound the log: on a busy CPU the loop's goroutine
// and its turn at the gate came late, and the log grew by what all the
// writes of that wait added (docs/development.md has the sizes). So the
// writes also count: the one that makes checkpointAfter since the last
// round hands the gate straight to the checkpointer. The checkpointer has a
// connection of its own, so that a round never waits, holding the gate, for
// one of the pool's (readers of deep pages can hold them all for long).
const (
	// checkpointEvery is how often the loop copies the log into the
	// database when anything was written and checkpointAfter did not
	// already start a round. Under load the commits start the rounds; much
	// shorter periods copied the pages that every write touches (the
	// tables' and indexes' last pages, the event counter) several times
	// over, and held the gate longer per page copied.
	checkpointEvery = 200 * time.Millisecond
	// checkpointAfter is how many committed transactions start a round at
	// once: at the pages an item write adds, a log of a few megabytes (less
	// when they share batches, which write shared pages once).
	checkpointAfter = 128
	// restartAbove is the log length, in pages, past which the round also
	// waits for readers to leave the log (RESTART), so that the next write
	// starts it over: a round normally finds fewer, and more means that a
	// reader still used the log when the write after the last round came
	// (make bench's PUT row let the log grow with passive rounds only).
	restartAbove = 2048
	// truncateAbove is the log file size past which the round also
	// truncates it.
	truncateAbove = 32 << 20
	// checkpointWait bounds how long a round waits for readers, the writers
	// queued behind it: a reader still busy after it holds the log until a
	// later round.
	checkpointWait = 10 * time.Millisecond
	// journalSizeLimit is what SQLite truncates the log to when it starts
	// over from its beginning (journal_size_limit).
	journalSizeLimit = 16 << 20
)

// checkpointer keeps the write-ahead log of one SQLite file short.
type checkpointer struct {
	db     *sql.DB // its own connection, apart from the pool
	gate   *writeGate
	wal    string // path of the log file
	max    int64  // truncateAbove
	long   int    // restartAbove
	behind bool   // the last round left pages in the log (readers used them)
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// startCheckpointer starts the checkpoints of the SQLite file at path, on a
// connection of its own.
func startCheckpointer(path string, gate *writeGate) (*checkpointer, error) {
	db, err := sql.Open("sqlite", sqliteDSN(path, checkpointWait))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	c := &checkpointer{db: db, gate: gate, wal: path + "-wal", max: truncateAbove, long: restartAbove, quit: make(chan struct{}), done: make(chan struct{})}
	gate.handoff = make(chan struct{}, 1)
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-c.gate.handoff: // a writer passed the gate on
		case <-t.C:
			if c.gate.writes.Load() == 0 && !c.behind {
				continue
			}
			// While the loop waits its turn, a writer may hand it the
			// gate instead.
			select {
			case c.gate.ch <- struct{}{}:
			case <-c.gate.handoff:
			case <-c.quit:
				return
			}
		}
		c.gate.flush() // the batch a writer handed on is committed first
		err := c.copyLog(context.Background())
		c.gate.release()
		if err != nil {
			slog.Warn("sqlite checkpoint", "err", err)
		}
	}
}

// copyLog copies the log into the database (PASSIVE: it leaves the pages
// that readers still use), waits for readers to leave a log longer than
// c.long pages (RESTART), and truncates a log file grown past c.max. The
// caller holds the gate.
func (c *checkpointer) copyLog(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.gate.writes.Store(0)
	var busy, frames, copied int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		c.behind = true
		return fmt.Errorf("passive: %w", err)
	}
	c.behind = copied < frames
	if frames > c.long {
		if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &frames, &copied); err != nil {
			return fmt.Errorf("restart: %w", err)
		}
		c.behind = busy != 0 || copied < frames
	}
	if st, err := os.Stat(c.wal); err != nil || st.Size() <= c.max {
		return nil
	}
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	return nil
}

// stop ends the rounds and waits for the loop. It takes the gate first, so
// that a writer who handed it over has its round and the writers after see
// that no checkpointer takes the gate any more.
func (c *checkpointer) stop() {
	c.once.Do(func() {
		c.gate.closed.Store(true)
		err := c.gate.acquire(context.Background())
		if err == nil {
			c.gate.flush()
		}
		close(c.quit)
		<-c.done
		if err == nil {
			c.gate.release()
		}
	})
}

// close stops the rounds and closes the checkpointer's connection.
func (c *checkpointer) close() error {
	c.stop()
	return c.db.Close()
}
