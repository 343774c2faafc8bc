package database

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"time"

	"entgo.io/ent/dialect"
	"github.com/VictoriaMetrics/metrics"
)

// Group commit. SQLite commits one transaction at a time, and each commit
// writes to the log every page its transaction changed: a create changes
// the last leaf of the items table, of each of its indexes, of the events
// table and its indexes, the counter's page and the event sequence's page,
// and under load most of a write's time went to writing those pages and
// the commit's bookkeeping, while the next writers queued at the gate.
//
// So the transactions of this process share SQLite's: the first writer at
// the gate begins a transaction (a batch), and each writer's transaction,
// the first's included, is a savepoint in it (member). A member that
// commits releases its savepoint and hands the gate on with the batch still
// open; the batch commits once the writers on their way to the gate have
// joined it (settle), and every member's Commit returns that commit's
// result. A member that
// rolls back undoes its own savepoint only: its writes leave no trace, and
// the members before and after it commit. Nothing is acknowledged before
// the commit that holds it: Commit returns only then, so a request answers
// only for a change that is in the database, as before.
//
// A lone writer's batch commits at once: the batching costs it two
// statements (SAVEPOINT, RELEASE), a goroutine and no wait. Under load the
// writers join the open batch, and a batch lasts at most its window
// (DATABASE_BATCH_WINDOW) from its first member's start, or maxBatch
// members. A member that found the batch's earlier members' writes
// (a row they made) waits for their commit even when it rolls back, so that
// no answer rests on a write that might not commit.
//
// PostgreSQL commits transactions side by side and has no gate: it keeps
// one transaction per request.

// DefaultBatchWindow is the longest a batch stays open from its first
// member's start (DATABASE_BATCH_WINDOW's default).
const DefaultBatchWindow = 5 * time.Millisecond

// maxBatch bounds the members of one batch.
const maxBatch = 256

// batch is one SQLite transaction that several writers' transactions share.
type batch struct {
	tx      watchedTx // notes storage failures and a commit's success
	opened  time.Time
	members int           // savepoints released into it
	done    chan struct{} // closed once the batch has committed or rolled back
	err     error         // the commit's result, set before done closes
}

// batchStats counts the batches and their members for /metrics.
type batchStats struct {
	commits  *metrics.Counter // batches committed
	members  *metrics.Counter // transactions in them
	rollback *metrics.Counter // transactions rolled back inside a batch
}

// join waits for the gate and returns a member of the open batch, beginning
// one when none is open.
func (w writeWatch) join(ctx context.Context) (dialect.Tx, error) {
	g := w.gate
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	b := g.open
	if b == nil {
		tx, err := w.Driver.Tx(ctx)
		if err != nil {
			g.release()
			w.health.note(err)
			return nil, err
		}
		b = &batch{tx: watchedTx{Tx: tx, health: w.health}, opened: time.Now(), done: make(chan struct{})}
		g.open = b
	}
	m := &member{b: b, g: g, ctx: context.WithoutCancel(ctx), prior: b.members}
	if err := m.exec("SAVEPOINT member"); err != nil {
		// The batch's transaction does not take savepoints: it failed.
		g.abort(fmt.Errorf("batch: %w", err))
		g.leave(0)
		return nil, err
	}
	return m, nil
}

// member is one writer's transaction inside a batch: a savepoint. Only the
// writer holding the gate runs statements, so the batch's transaction has
// one user at a time.
type member struct {
	b     *batch
	g     *writeGate
	ctx   context.Context // for the savepoint's own statements
	prior int             // members released before this one began
	ended bool
}

func (m *member) exec(query string) error {
	return m.b.tx.Exec(m.ctx, query, []any{}, nil)
}

// Exec implements dialect.ExecQuerier.
func (m *member) Exec(ctx context.Context, query string, args, v any) error {
	if m.ended {
		return sql.ErrTxDone
	}
	return m.b.tx.Exec(ctx, query, args, v)
}

// Query implements dialect.ExecQuerier.
func (m *member) Query(ctx context.Context, query string, args, v any) error {
	if m.ended {
		return sql.ErrTxDone
	}
	return m.b.tx.Query(ctx, query, args, v)
}

// ExecContext runs a statement ent has no builder for (watchedTx's).
func (m *member) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if m.ended {
		return nil, sql.ErrTxDone
	}
	return m.b.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a statement ent has no builder for that returns rows
// (watchedTx's).
func (m *member) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if m.ended {
		return nil, sql.ErrTxDone
	}
	return m.b.tx.QueryContext(ctx, query, args...)
}

// Commit releases the member's savepoint into the batch and returns once
// the batch has committed, with the batch's result.
func (m *member) Commit() error {
	if m.ended {
		return sql.ErrTxDone
	}
	m.ended = true
	if err := m.exec("RELEASE member"); err != nil {
		m.undo()
		return err
	}
	m.b.members++
	m.g.settle()
	return m.g.await(m.b)
}

// Rollback undoes the member's savepoint; the batch goes on without it.
func (m *member) Rollback() error {
	if m.ended {
		return sql.ErrTxDone
	}
	m.ended = true
	err := m.undo()
	if m.prior > 0 {
		_ = m.g.await(m.b) // it may have read the earlier members' writes
	}
	return err
}

// undo rolls the savepoint back and settles the batch; when SQLite has
// rolled back the whole transaction already (a full disk, an I/O error
// abort it), the batch fails: no member of it is acknowledged.
func (m *member) undo() error {
	err := m.exec("ROLLBACK TO member")
	if err == nil {
		err = m.exec("RELEASE member")
	}
	if err != nil {
		m.g.abort(fmt.Errorf("batch rolled back: %w", err))
		m.g.leave(0)
		return err
	}
	if s := m.g.stats.Load(); s != nil {
		s.rollback.Inc()
	}
	m.g.settle()
	return nil
}

// settle ends the gate holder's turn after its member ended: the batch
// stays open for the next writer when one waits, or commits now when it is
// old or full. When nobody waits yet, the batch stays open with the gate
// free, and a committer commits it once the goroutines runnable now have had
// their turn (commitSoon).
//
// With the server on one CPU, the requests that arrived while a member ran
// its statements are still being read and decoded, runnable but not yet at
// the gate: counting the writers at the gate found nobody nearly every time
// (1.2 transactions a commit at 32 connections). A member that yielded
// before counting, gate held, let them reach it (14–17 a commit), but also
// let the event streams' writers run while every writer waited (the
// realtime row's creates fell to a third of their rate without streams).
// The committer yields instead, with the gate free: the requests join the
// batch as they come, the streams hold nobody up, and a lone writer, whose
// committer finds nothing else to run, commits at once.
func (g *writeGate) settle() {
	b := g.open
	if g.window <= 0 || b.members >= maxBatch || time.Since(b.opened) >= g.window {
		g.leave(g.commitOpen())
		return
	}
	if g.waiting.Load() == 0 && g.committing.CompareAndSwap(false, true) {
		go g.commitSoon()
	}
	g.release() // the next writer, if any, continues the batch
}

// commitSoon commits the open batch once the goroutines runnable when it
// was started have run.
func (g *writeGate) commitSoon() {
	runtime.Gosched()
	g.committing.Store(false) // a member settling from now on starts another
	if err := g.acquire(context.Background()); err != nil {
		return // the members take the gate themselves after the window (await)
	}
	g.leave(g.commitOpen())
}

// commitOpen commits the open batch, if any, and returns how many
// transactions it held (0 if it failed). The caller holds the gate.
func (g *writeGate) commitOpen() int {
	b := g.open
	if b == nil {
		return 0
	}
	g.open = nil
	if b.members == 0 { // its members all rolled back: nothing to write
		b.err = b.tx.Rollback()
		close(b.done)
		return 0
	}
	b.err = b.tx.Commit()
	close(b.done)
	if b.err != nil {
		return 0
	}
	if s := g.stats.Load(); s != nil {
		s.commits.Inc()
		s.members.Add(b.members)
	}
	return b.members
}

// abort rolls the open batch back with err as its members' result. The
// caller holds the gate.
func (g *writeGate) abort(err error) {
	b := g.open
	g.open = nil
	_ = b.tx.Rollback()
	b.err = err
	close(b.done)
}

// await waits for b's commit. Normally the last member commits it; should
// no writer come after a member that handed the gate on (it gave up
// waiting), the members take the gate after the window and commit the batch
// themselves.
func (g *writeGate) await(b *batch) error {
	select {
	case <-b.done:
		return b.err
	default:
	}
	t := time.NewTimer(g.window)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return b.err
		case <-t.C:
		}
		if err := g.acquire(context.Background()); err == nil {
			g.leave(g.commitOpen()) // b, unless it was committed meanwhile
		}
		t.Reset(g.window)
	}
}

// flush commits the open batch before a writer that does not join one (the
// checkpointer) works. The caller holds the gate.
func (g *writeGate) flush() {
	if n := g.commitOpen(); n > 0 {
		g.writes.Add(int64(n))
	}
}

// SetBatchWindow sets the longest an SQLite batch stays open
// (DATABASE_BATCH_WINDOW); 0 commits every transaction alone. Call it
// before the first write. It does nothing on PostgreSQL.
func (d *DB) SetBatchWindow(window time.Duration) {
	if d.gate != nil {
		d.gate.window = window
	}
}

// registerMetrics registers the batch counters on set.
func (g *writeGate) registerMetrics(set *metrics.Set) {
	g.stats.Store(&batchStats{
		commits:  set.NewCounter("itemsvc_sqlite_commits_total"),
		members:  set.NewCounter("itemsvc_sqlite_committed_transactions_total"),
		rollback: set.NewCounter("itemsvc_sqlite_rolled_back_transactions_total"),
	})
}

// HoldWrites takes the write gate, committing the open batch first, and
// returns how to give it back: the writers that come meanwhile queue, and
// once it is given back they share one batch (a test's way to form one).
// On PostgreSQL it holds nothing.
func (d *DB) HoldWrites(ctx context.Context) (release func(), err error) {
	g := d.gate
	if g == nil {
		return func() {}, nil
	}
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	g.flush()
	return g.release, nil
}

// QueuedWriters is how many writers wait at the write gate (0 on
// PostgreSQL).
func (d *DB) QueuedWriters() int {
	if d.gate == nil {
		return 0
	}
	return int(d.gate.waiting.Load())
}
