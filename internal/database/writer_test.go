package database

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openFile opens the SQLite database at path for one test.
func openFile(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// checkpoint runs one round outside the loop, holding this process's
// writers at the gate as the loop does.
func checkpoint(ctx context.Context, c *checkpointer) error {
	if err := c.gate.acquire(ctx); err != nil {
		return err
	}
	defer c.gate.release()
	return c.copyLog(ctx)
}

// TestCheckpointTruncatesLog: the connections leave checkpoints to the
// background loop, with a size limit on the log; one round of the loop over a
// log past its bound leaves the log empty and the rows in the database.
func TestCheckpointTruncatesLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	db := openFile(t, path)
	db.ckpt.stop() // rounds run only when the test asks
	db.ckpt.max = 64 << 10

	for _, p := range []struct {
		pragma string
		want   int64
	}{{"wal_autocheckpoint", 0}, {"journal_size_limit", journalSizeLimit}} {
		var got int64
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil || got != p.want {
			t.Fatalf("%s = %d (%v), want %d", p.pragma, got, err, p.want)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	const rows = 64
	for range rows {
		if _, err := db.SQL.ExecContext(ctx, "INSERT INTO t VALUES (?)", strings.Repeat("x", 8<<10)); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if n := walSize(); n <= db.ckpt.max {
		t.Fatalf("log holds %d bytes after the writes; the test needs more than %d", n, db.ckpt.max)
	}
	if err := checkpoint(ctx, db.ckpt); err != nil {
		t.Fatal(err)
	}
	if n := walSize(); n != 0 {
		t.Fatalf("log holds %d bytes after the checkpoint, want 0", n)
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != rows {
		t.Fatalf("count = %d (%v), want %d", n, err, rows)
	}
}

// TestGateHandsOverAfterWrites: the writer whose commit makes
// checkpointAfter since the last round does not release the gate but hands it
// to the checkpointer; writers that committed nothing never do.
func TestGateHandsOverAfterWrites(t *testing.T) {
	ctx := context.Background()
	g := newWriteGate()
	g.handoff = make(chan struct{}, 1)
	for i := range checkpointAfter - 1 {
		if err := g.acquire(ctx); err != nil {
			t.Fatal(err)
		}
		g.leave(1)
		if len(g.handoff) != 0 {
			t.Fatalf("handed over after %d writes, want %d", i+1, checkpointAfter)
		}
	}
	if err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	g.leave(0) // a rollback
	if len(g.handoff) != 0 {
		t.Fatal("a writer that committed nothing handed over the gate")
	}
	if err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	g.leave(1)
	select {
	case <-g.handoff:
	default:
		t.Fatalf("no handover after %d writes", checkpointAfter)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := g.acquire(short); err == nil {
		t.Fatal("the gate was free while the checkpointer held it")
	}
	g.release() // the checkpointer's round is over
	if err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	g.closed.Store(true)
	g.writes.Store(checkpointAfter)
	g.leave(1)
	if len(g.handoff) != 0 {
		t.Fatal("handed over to a stopped checkpointer")
	}
}

// TestLoopTakesHandoverWhileWaiting: a round of the clock that waits for the
// gate takes it as well from a writer who hands it over (it once waited out
// its 5 s timeout instead, with every writer queued behind).
func TestLoopTakesHandoverWhileWaiting(t *testing.T) {
	ctx := context.Background()
	db := openFile(t, filepath.Join(t.TempDir(), "handover.db"))
	g := db.ckpt.gate
	if err := g.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	g.writes.Store(checkpointAfter - 1)
	time.Sleep(3 * checkpointEvery) // the loop's round now waits for the gate
	g.leave(1)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := g.acquire(short); err != nil {
		t.Fatalf("gate still held after the handover: %v", err)
	}
	g.release()
}

// TestRoundWaitsBrieflyForReaders: a round over a long log waits for the
// readers still using it (RESTART), so that the next write starts the log
// over; a reader that stays holds the writers back checkpointWait at most,
// not busy_timeout, and the log is left for a later round.
func TestRoundWaitsBrieflyForReaders(t *testing.T) {
	ctx := context.Background()
	db := openFile(t, filepath.Join(t.TempDir(), "readers.db"))
	db.ckpt.stop() // rounds run only when the test asks
	db.ckpt.long = 8
	insert := func(n int) {
		t.Helper()
		for range n {
			if _, err := db.SQL.ExecContext(ctx, "INSERT INTO t VALUES (?)", strings.Repeat("x", 4<<10)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	insert(4)
	reader, err := db.SQL.QueryContext(ctx, "SELECT v FROM t") // a read transaction, open until Close
	if err != nil {
		t.Fatal(err)
	}
	if !reader.Next() {
		t.Fatal("no rows")
	}
	insert(16)
	start := time.Now()
	if err := checkpoint(ctx, db.ckpt); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second || !db.ckpt.behind {
		t.Fatalf("round beside a reader took %s, behind %v; want under 2 s and behind", took, db.ckpt.behind)
	}
	// The reader leaves during the next round, which waits for it: the
	// write right after starts the log over (after a passive round it
	// would find the reader still there, and append).
	go func() {
		time.Sleep(checkpointWait / 4)
		reader.Close()
	}()
	if err := checkpoint(ctx, db.ckpt); err != nil {
		t.Fatal(err)
	}
	if db.ckpt.behind {
		t.Fatal("behind after the reader left")
	}
	insert(1)
	var busy, frames, copied int
	if err := db.SQL.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	if frames > 4 {
		t.Fatalf("log holds %d pages after one write; want it started over", frames)
	}
}
