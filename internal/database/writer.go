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
// that meet wait in SQLite's busy handler, which sleeps in growing steps (up
// to 100 ms) and checks again: under load a PUT waited for a lock that had
// long been free, and its p99 was 5 to 10 times the lean reference's. The
// gate queues this process's writers in Go instead, so the next one starts as
// soon as the previous commits; busy_timeout still covers other processes
// (the CLI) writing to the same file.
type writeGate struct {
	ch chan struct{}
	// writes counts the commits since the last checkpoint; the commit
	// that brings it to checkpointAfter kicks the checkpointer (nil: no
	// checkpointer).
	writes atomic.Int64
	kick   chan struct{}
	// want says that the checkpointer, its fsync outside the gate done,
	// waits for the gate: the writer leaving next hands it over on handoff
	// instead of releasing it, so that the checkpointer does not queue
	// behind every writer while they add to the log it is to copy.
	want    atomic.Bool
	handoff chan struct{}
	closed  atomic.Bool // the checkpointer stopped: no more handoffs
}

// gateTimeout bounds a wait for the gate like busy_timeout bounds a wait for
// the lock: a writer that cannot start within it fails instead of hanging.
const gateTimeout = 10 * time.Second

// errGateTimeout is the error of a writer that waited gateTimeout in vain.
var errGateTimeout = errors.New("database is locked: waited too long for the writer")

func newWriteGate() *writeGate { return &writeGate{ch: make(chan struct{}, 1)} }

// acquire waits for the gate; release or leave must follow exactly once.
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

// leave ends a writer's turn; wrote says that it committed. The writer that
// brings the commits since the last checkpoint to checkpointAfter kicks the
// checkpointer; a writer that finds the checkpointer waiting for the gate
// hands the gate to it rather than to the next writer.
func (g *writeGate) leave(wrote bool) {
	if wrote && g.kick != nil && g.writes.Add(1) >= checkpointAfter {
		select {
		case g.kick <- struct{}{}:
		default: // kicked already
		}
	}
	if g.want.Load() && !g.closed.Load() && g.want.CompareAndSwap(true, false) {
		g.handoff <- struct{}{} // never blocks: one want, one handoff
		return
	}
	g.release()
}

// WAL upkeep. SQLite's automatic checkpoint runs inside the commit that
// crosses 1000 pages, so a request paid for it; and while readers kept
// using the log it could not start over, so the file grew (109 MB beside a
// 92 MB database after a minute of mixed load) and kept that size. The
// connections turn the automatic checkpoint off (wal_autocheckpoint(0)) and
// a checkpointer copies the log instead, between two writes, on a
// connection of its own: a checkpoint that no write runs beside copies the
// whole log, so that the next write starts it over. (Passive checkpoints
// beside the writes never caught up with the last commit under load, and
// the log grew until a truncation stopped the writers for as long as
// copying the backlog took: PUT p99 ten times the reference's. Copying beside
// the writers first did not help on one CPU either: the checkpoint's
// goroutine got the CPU in turns with every request's, a copy took up to 2 s
// and the writers filled the log meanwhile.)
//
// What a round holds the writers for is kept short (issue 28: POST p99 31
// times its p50). The fsync of the log that every checkpoint starts with,
// tens of milliseconds on a busy disk, is done before the round takes the
// gate (syncLog), so that the one under the gate has only the last commits
// to write; and the wait for readers (RESTART) is left to rounds that find
// the log longer than a round adds. make bench's create row, gate held per
// round: median 28 ms, p90 49 ms before; 2 to 7 ms and 8 to 38 ms after.
//
// A clock alone did not bound the log: on a busy CPU the loop's goroutine
// came late, up to a second, and the log grew by what all the writes of that
// second added (5,212 pages, 20 MB, in one round of make bench's create row;
// 68 MB in the PUT row of another run). So the writes also count: the one
// that makes checkpointAfter since the last round kicks the checkpointer, and
// the writer that leaves while it waits hands it the gate.
const (
	// checkpointEvery is how often the loop copies the log into the
	// database when anything was written and checkpointAfter did not
	// already start a round. Under load the commits start the rounds; rounds
	// every 50 ms instead copied the pages that every write touches (the
	// tables' and indexes' last pages, the event counter) several times
	// over: make bench's write rows spent 19.5 µs of held gate per page
	// copied, against 14.1 µs at 200 ms.
	checkpointEvery = 200 * time.Millisecond
	// checkpointAfter is how many commits start a round at once: about
	// 2,400 pages (9 MB) of log at the 16 to 19 pages an item create adds.
	checkpointAfter = 128
	// restartAbove is the log length, in pages, past which the round also
	// waits for readers to leave the log (RESTART), so that the next write
	// starts it over: a round normally finds up to about 2,500 pages (128
	// creates of 16 to 19 pages), and more means that a reader still used the
	// log when the write after the last round came (make bench's PUT row:
	// 33 MB of log with passive rounds only). RESTART holds the writers
	// while it waits, so a round that needs none must not take it.
	restartAbove = 4096
	// truncateAbove is the log file size past which the round also
	// truncates it.
	truncateAbove = 32 << 20
	// checkpointWait bounds how long a round waits for readers, the writers
	// queued behind it: a reader still busy after it holds the log until a
	// later round.
	checkpointWait = 100 * time.Millisecond
	// journalSizeLimit is what SQLite truncates the log to when it starts
	// over from its beginning (journal_size_limit).
	journalSizeLimit = 16 << 20
)

// checkpointer keeps the write-ahead log of one SQLite file short.
type checkpointer struct {
	db     *sql.DB // its own connection, apart from the pool
	gate   *writeGate
	wal    string       // path of the log file
	max    int64        // truncateAbove
	long   int          // restartAbove
	behind bool         // the last round left pages in the log (readers used them)
	synced atomic.Int64 // fsyncs of the log beside the writers (syncLog)
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
	gate.kick = make(chan struct{}, 1)
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
		case <-c.gate.kick: // checkpointAfter commits
		case <-t.C:
			if c.gate.writes.Load() == 0 && !c.behind {
				continue
			}
		}
		if err := c.round(context.Background()); err != nil {
			if errors.Is(err, errStopped) {
				return
			}
			slog.Warn("sqlite checkpoint", "err", err)
		}
	}
}

// errStopped ends a round that waited for the gate when the checkpointer
// stopped.
var errStopped = errors.New("checkpointer stopped")

// round syncs the log to disk beside the writers, then takes the gate
// (handed over by the next writer to leave) and copies the log.
func (c *checkpointer) round(ctx context.Context) error {
	c.syncLog()
	c.gate.want.Store(true)
	select {
	case c.gate.ch <- struct{}{}:
		c.gate.want.Store(false) // no writer holds the gate to hand it over
	case <-c.gate.handoff:
	case <-c.quit:
		// A writer may have handed the gate over meanwhile; stop waits
		// for it.
		if c.gate.want.CompareAndSwap(true, false) {
			return errStopped
		}
		<-c.gate.handoff
		c.gate.release()
		return errStopped
	}
	defer c.gate.release()
	return c.copyLog(ctx)
}

// syncLog writes the log's pages to disk (fsync) without the gate. A
// checkpoint syncs the log before it copies anything (synchronous=NORMAL
// commits do not), and on a busy disk that fsync took tens of milliseconds
// with every writer queued behind the round; after this one it has only the
// commits made meanwhile to write. It is only an extra fsync: durability is
// SQLite's as before. (The log file carries no locks, so closing this
// descriptor releases none of SQLite's.) A missing log has nothing to sync.
func (c *checkpointer) syncLog() {
	f, err := os.Open(c.wal)
	if err != nil {
		return
	}
	if f.Sync() == nil {
		c.synced.Add(1)
	}
	f.Close()
}

// copyLog copies the log into the database (PASSIVE: it leaves the pages
// that readers still use), waits for readers to leave a log longer than
// c.long pages (RESTART), and truncates a log file grown past c.max. The
// caller holds the gate.
func (c *checkpointer) copyLog(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.gate.writes.Store(0)
	select {
	case <-c.gate.kick: // commits during syncLog: this round copies them
	default:
	}
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
