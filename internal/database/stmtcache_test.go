package database

import (
	"context"
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
