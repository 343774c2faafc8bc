package graph_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestNoNPlusOne counts the statements a nested query runs: entgql's field
// collection loads a page of items with their owners in a fixed number of
// queries, however long the page, and the totals (the page's, the owners')
// are one read of the item counters each.
func TestNoNPlusOne(t *testing.T) {
	var statements atomic.Int64
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) {
		o.WrapDriver = func(d dialect.Driver) dialect.Driver {
			return dialect.DebugWithContext(d, func(ctx context.Context, _ ...any) {
				// Only what resolvers run for a viewer; not token checks
				// or background work.
				if _, ok := viewer.FromContext(ctx); ok {
					statements.Add(1)
				}
			})
		}
	}))
	const query = `{ items(first: 20) { totalCount edges { node { id name owner { id email items { totalCount } } } } } }`
	count := func(as testutil.Actor) (int64, int) {
		statements.Store(0)
		r := testutil.GQL(t, env, as.Token, query, nil).OK(t)
		return statements.Load(), len(r.IDs(t, "items"))
	}

	env.CreateItem(env.Alice, "first")
	env.CreateItem(env.Bob, "first of bob")
	one, n := count(env.Admin)
	if n != 2 {
		t.Fatalf("%d items, want 2", n)
	}
	for i := range 20 {
		as := env.Alice
		if i%2 == 1 {
			as = env.Bob
		}
		env.CreateItem(as, fmt.Sprintf("item %d", i))
	}
	many, n := count(env.Admin)
	if n != 20 {
		t.Fatalf("%d items, want 20", n)
	}
	t.Logf("statements: %d for 2 items, %d for 20 items with owners", one, many)
	if one == 0 {
		t.Fatal("no statement counted: the driver wrap is not in the path")
	}
	if many != one {
		t.Errorf("statements grow with the page: %d for 2 items, %d for 20", one, many)
	}
	if many > 4 {
		t.Errorf("%d statements for one page with owners, want at most 4 (items, total, owners, owners' totals)", many)
	}
}
