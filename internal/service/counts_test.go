package service_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestItemCountsStayExact drives every kind of item change the service and
// ent allow (creates, status changes one by one and in bulk, deletes one by
// one and in bulk, a transaction rolled back after changing all of those,
// and writers racing on the same items) and after each step compares every
// counter with a real COUNT(*) of the items.
func TestItemCountsStayExact(t *testing.T) {
	env := testutil.New(t)
	svc := env.App.Service
	as := func(a testutil.Actor, admin bool) context.Context {
		role := viewer.RoleUser
		if admin {
			role = viewer.RoleAdmin
		}
		return viewer.NewContext(context.Background(), viewer.Viewer{UserID: a.UserID, KeyID: a.KeyID, Role: role})
	}
	alice, bob, admin := as(env.Alice, false), as(env.Bob, false), as(env.Admin, true)
	status := func(s string) ent.UpdateItemInput { return ent.UpdateItemInput{Status: new(item.Status(s))} }
	create := func(ctx context.Context, name, st string) string {
		t.Helper()
		it, err := svc.CreateItem(ctx, ent.CreateItemInput{Name: name, Status: new(item.Status(st))})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return it.ID
	}

	t.Run("creates", func(t *testing.T) {
		for i := range 5 {
			create(alice, fmt.Sprintf("a%d", i), "active")
			create(bob, fmt.Sprintf("b%d", i), []string{"active", "archived"}[i%2])
		}
		create(admin, "admin's", "archived")
		assertCounts(t, env)
	})

	t.Run("status changes and no-op updates", func(t *testing.T) {
		id := create(alice, "toggled", "active")
		for _, st := range []string{"archived", "archived", "active", "archived"} {
			if _, err := svc.UpdateItem(alice, id, status(st)); err != nil {
				t.Fatal(err)
			}
		}
		name := "renamed"
		if _, err := svc.UpdateItem(admin, id, ent.UpdateItemInput{Name: &name}); err != nil {
			t.Fatal(err)
		}
		// Another user's item is refused and changes nothing.
		if _, err := svc.UpdateItem(bob, id, status("active")); apperr.From(err).Code != apperr.CodePermissionDenied {
			t.Fatalf("bob changed alice's item: %v", err)
		}
		assertCounts(t, env)
	})

	t.Run("deletes", func(t *testing.T) {
		id := create(bob, "short-lived", "archived")
		if err := svc.DeleteItem(bob, id); err != nil {
			t.Fatal(err)
		}
		if err := svc.DeleteItem(admin, create(alice, "deleted by admin", "active")); err != nil {
			t.Fatal(err)
		}
		assertCounts(t, env)
	})

	t.Run("bulk changes in one transaction", func(t *testing.T) {
		tx, err := svc.Client().Tx(admin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Item.Update().Where(item.UserID(env.Bob.UserID)).SetStatus(item.StatusArchived).Save(admin); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Item.Delete().Where(item.UserID(env.Alice.UserID), item.NameHasPrefix("a")).Exec(admin); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		assertCounts(t, env)
	})

	t.Run("rolled back", func(t *testing.T) {
		keep := create(alice, "kept", "active")
		before := counters(t, env)
		tx, err := svc.Client().Tx(admin)
		if err != nil {
			t.Fatal(err)
		}
		c := tx.Client()
		if _, err := c.Item.Create().SetName("never").SetUserID(env.Bob.UserID).Save(admin); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Item.UpdateOneID(keep).SetStatus(item.StatusArchived).Save(admin); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Item.Update().SetStatus(item.StatusActive).Save(admin); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Item.Delete().Where(item.UserID(env.Admin.UserID)).Exec(admin); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if after := counters(t, env); !maps.Equal(after, before) {
			t.Errorf("a rolled-back transaction moved the counters:\nbefore %v\nafter  %v", before, after)
		}
		assertCounts(t, env)
	})

	t.Run("outside a transaction", func(t *testing.T) {
		// The hook refuses, rather than change items without their counters.
		if _, err := svc.Client().Item.Create().SetName("loose").SetUserID(env.Alice.UserID).Save(alice); err == nil {
			t.Fatal("an item was created outside a transaction")
		}
		assertCounts(t, env)
	})

	t.Run("concurrent writers", func(t *testing.T) {
		// Shared items that every writer flips and then tries to delete:
		// each change must be counted once, whoever wins.
		shared := make([]string, 4)
		for i := range shared {
			shared[i] = create(alice, fmt.Sprintf("shared %d", i), "active")
		}
		const writers = 6
		var wg sync.WaitGroup
		errs := make(chan error, writers*64+16)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := []context.Context{alice, bob, admin}[w%3]
				for i := range 6 {
					st := item.Status([]string{"active", "archived"}[(w+i)%2])
					it, err := svc.CreateItem(ctx, ent.CreateItemInput{Name: fmt.Sprintf("w%d-%d", w, i), Status: &st})
					if err != nil {
						errs <- err
						continue
					}
					// The bulk writers below may have deleted it already.
					if _, err := svc.UpdateItem(ctx, it.ID, status([]string{"archived", "active"}[(w+i)%2])); err != nil && !expected(err) {
						errs <- err
					}
					if i%3 == 0 {
						if err := svc.DeleteItem(ctx, it.ID); err != nil && !expected(err) {
							errs <- err
						}
					}
					// Everyone races on the shared items (admin and alice may
					// change them; bob is refused).
					id := shared[(w+i)%len(shared)]
					if _, err := svc.UpdateItem(ctx, id, status([]string{"active", "archived"}[(w+i)%2])); err != nil && !expected(err) {
						errs <- err
					}
				}
				for _, id := range shared[:2] {
					if err := svc.DeleteItem(ctx, id); err != nil && !expected(err) {
						errs <- err
					}
				}
			}()
		}
		// Bulk changes race with them, one per transaction (as every
		// change of the service): flip all of alice's items of one status
		// while new ones arrive, and delete some of the writers' items.
		bulk := func(f func(tx *ent.Tx) error) {
			tx, err := svc.Client().Tx(admin)
			if err != nil {
				errs <- err
				return
			}
			if err := f(tx); err != nil {
				_ = tx.Rollback()
				errs <- err
				return
			}
			if err := tx.Commit(); err != nil {
				errs <- err
			}
		}
		for b := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 6 {
					from, to := item.StatusActive, item.StatusArchived
					if (b+i)%2 == 1 {
						from, to = to, from
					}
					bulk(func(tx *ent.Tx) error {
						_, err := tx.Item.Update().Where(item.UserID(env.Alice.UserID), item.StatusEQ(from)).SetStatus(to).Save(admin)
						return err
					})
				}
				bulk(func(tx *ent.Tx) error {
					_, err := tx.Item.Delete().Where(item.NameHasPrefix(fmt.Sprintf("w%d-", b))).Exec(admin)
					return err
				})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assertCounts(t, env)
	})
}

// expected reports the refusals a racing writer may meet: another user's
// item, or one a concurrent writer already deleted.
func expected(err error) bool {
	code := apperr.From(err).Code
	return code == apperr.CodePermissionDenied || code == apperr.CodeNotFound
}

// counters reads every non-zero counter, the sum of its slots, as
// "user_id status" -> count.
func counters(t *testing.T, env *testutil.Env) map[string]int {
	t.Helper()
	return scanCounts(t, env, `SELECT user_id, status, SUM(count) FROM item_counts GROUP BY user_id, status HAVING SUM(count) <> 0`)
}

// assertCounts compares every counter with a real count of the items.
func assertCounts(t *testing.T, env *testutil.Env) {
	t.Helper()
	want := scanCounts(t, env, `SELECT user_id, status, COUNT(*) FROM items GROUP BY user_id, status`)
	if got := counters(t, env); !maps.Equal(got, want) {
		t.Fatalf("counters differ from the items:\ncounters %v\nitems    %v", got, want)
	}
	// One slot may go below 0 (an item counted on one slot, deleted on
	// another); the sum of a count's slots never.
	var negative int
	if err := env.App.DB.SQL.QueryRow(`SELECT COUNT(*) FROM (SELECT SUM(count) AS n FROM item_counts GROUP BY user_id, status) AS c WHERE n < 0`).Scan(&negative); err != nil || negative > 0 {
		t.Fatalf("%d negative counters (%v)", negative, err)
	}
}

func scanCounts(t *testing.T, env *testutil.Env, query string) map[string]int {
	t.Helper()
	rows, err := env.App.DB.SQL.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var user, status string
		var n int
		if err := rows.Scan(&user, &status, &n); err != nil {
			t.Fatal(err)
		}
		m[user+" "+status] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
