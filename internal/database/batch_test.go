package database

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"entgo.io/ent/dialect"
)

// exec runs one statement in tx or fails the test.
func execIn(t *testing.T, tx dialect.ExecQuerier, query string) {
	t.Helper()
	if err := tx.Exec(context.Background(), query, []any{}, nil); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestBatchAbandoned: a member that handed the gate on to a writer who then
// gave up (it stopped waiting) is not left waiting: after the window it
// takes the gate and commits its batch itself.
func TestBatchAbandoned(t *testing.T) {
	ctx := context.Background()
	db := openFile(t, filepath.Join(t.TempDir(), "batch.db"))
	db.SetBatchWindow(20 * time.Millisecond)
	execIn(t, db.driver, "CREATE TABLE t (v INTEGER)")

	tx, err := db.driver.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	execIn(t, tx, "INSERT INTO t VALUES (1)")
	db.gate.waiting.Add(1) // a writer seems to wait: the batch stays open
	done := make(chan error, 1)
	go func() { done <- tx.Commit() }()
	db.gate.waiting.Add(-1) // and gives up
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the member still waits for a batch nobody commits")
	}
	var n int
	if err := db.SQL.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v) after the commit returned, want 1", n, err)
	}
}

// TestBatchMembers: of three transactions that share a batch, the one that
// rolls back leaves nothing and the two others commit together, answered
// only once the batch has committed.
func TestBatchMembers(t *testing.T) {
	ctx := context.Background()
	db := openFile(t, filepath.Join(t.TempDir(), "batch.db"))
	db.SetBatchWindow(time.Minute)
	execIn(t, db.driver, "CREATE TABLE t (v INTEGER)")

	release, err := db.HoldWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 3)
	for v, commit := range []bool{true, false, true} {
		go func() {
			tx, err := db.driver.Tx(ctx)
			if err != nil {
				results <- err
				return
			}
			if err := tx.Exec(ctx, "INSERT INTO t VALUES (?)", []any{v}, nil); err != nil {
				results <- err
				return
			}
			if commit {
				results <- tx.Commit()
			} else {
				results <- tx.Rollback()
			}
		}()
	}
	for db.QueuedWriters() < 3 {
		time.Sleep(time.Millisecond)
	}
	if db.gate.open != nil {
		t.Fatal("a batch is open while the gate is held")
	}
	release()
	for range 3 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	var sum, n int
	if err := db.SQL.QueryRow("SELECT count(*), coalesce(sum(v), 0) FROM t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 2 || sum != 0+2 {
		t.Fatalf("%d rows summing to %d, want the two committed (0 and 2)", n, sum)
	}
}
