package database

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/privacy"
)

// TestTransactionStatementsPrepared: a statement run in a transaction is
// prepared in the background after its first use and then runs prepared in
// later transactions, also on a pool of one connection (:memory:), where
// preparing it during the transaction would wait for a second connection
// forever.
func TestTransactionStatementsPrepared(t *testing.T) {
	for _, url := range []string{"sqlite::memory:", "sqlite:" + t.TempDir() + "/db.sqlite"} {
		t.Run(url, func(t *testing.T) {
			ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
			db, err := Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			cache := db.driver.(writeWatch).Driver.(*preparedReads)
			const query = "UPDATE `settings` SET `value` = ? WHERE `id` = ? RETURNING `value`"
			write := func(v string) {
				t.Helper()
				tx, err := db.Client.Tx(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := tx.Client().QueryContext(ctx, query, v, "event_seq")
				if err != nil {
					t.Fatal(err)
				}
				var got string
				if !rows.Next() || rows.Scan(&got) != nil || got != v {
					t.Fatalf("RETURNING gave %q, want %q", got, v)
				}
				rows.Close()
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			write("1")
			deadline := time.Now().Add(5 * time.Second)
			for cache.txStmt(query) == nil {
				if time.Now().After(deadline) {
					t.Fatal("the statement was not prepared after its first use")
				}
				time.Sleep(time.Millisecond)
			}
			write("2")
			write("3")
			v, err := db.Client.Setting.Get(ctx, "event_seq")
			if err != nil || v.Value != "3" {
				t.Fatalf("event_seq = %v (%v), want 3", v, err)
			}
		})
	}
}

// TestTransactionEndsWithItsContext: statements of a SQLite transaction run
// without the driver's per-statement watcher (preparedTx), yet a context
// that has ended still stops the transaction at its next step, and what it
// wrote before is rolled back.
func TestTransactionEndsWithItsContext(t *testing.T) {
	const update = "UPDATE `settings` SET `value` = ? WHERE `id` = ?"
	cases := []struct {
		name string
		// cancelAfter: statements run before the context is cancelled
		// (-1: cancelled before the transaction begins).
		cancelAfter int
	}{
		{"ended before begin", -1},
		{"ended before the first statement", 0},
		{"ended between statements", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := privacy.DecisionContext(context.Background(), privacy.Allow)
			db, err := Open(base, "sqlite:"+t.TempDir()+"/db.sqlite")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Migrate(base); err != nil {
				t.Fatal(err)
			}
			before, err := db.Client.Setting.Get(base, "event_seq")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(base)
			defer cancel()
			if tc.cancelAfter < 0 {
				cancel()
				if _, err := db.Client.Tx(ctx); !errors.Is(err, context.Canceled) {
					t.Fatalf("begin: %v, want context.Canceled", err)
				}
			} else {
				tx, err := db.Client.Tx(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; ; i++ {
					if i == tc.cancelAfter {
						cancel()
					}
					_, err := tx.Client().ExecContext(ctx, update, "changed", "event_seq")
					if i < tc.cancelAfter && err != nil {
						t.Fatalf("statement %d: %v", i, err)
					}
					if i >= tc.cancelAfter {
						if !errors.Is(err, context.Canceled) {
							t.Fatalf("statement %d after the end: %v, want context.Canceled", i, err)
						}
						break
					}
				}
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
			}
			after, err := db.Client.Setting.Get(base, "event_seq")
			if err != nil || after.Value != before.Value {
				t.Fatalf("value %q (%v), want %q kept", after.Value, err, before.Value)
			}
			// The write gate was left: the next transaction starts.
			tx, err := db.Client.Tx(base)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
