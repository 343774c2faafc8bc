package database_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/setting"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestConcurrentWriters: two independent pools on one database (the server
// and the CLI, or two replicas) write at the same time without "database is
// locked" errors: SQLite waits for the lock instead of failing.
func TestConcurrentWriters(t *testing.T) {
	ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
	url := testutil.DatabaseURL(t)
	var dbs []*database.DB
	for range 2 {
		db, err := database.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	const writers, writes = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		db := dbs[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				_, err := db.Client.Setting.Create().
					SetID(fmt.Sprintf("w%d-%d", w, i)).
					SetValue("v").
					Save(ctx)
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent write failed: %v", err)
	}
	// Only the writers' rows: migrations keep settings of their own (event_seq).
	n, err := dbs[0].Client.Setting.Query().Where(setting.IDNEQ("event_seq")).Count(ctx)
	if err != nil || n != writers*writes {
		t.Fatalf("count = %d (%v), want %d", n, err, writers*writes)
	}
}
