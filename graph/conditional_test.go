package graph_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestConditionalMutations: Item.etag is REST's ETag, and updateItem and
// deleteItem with ifMatch make their change only while the item still has
// that etag, else PRECONDITION_FAILED with nothing changed, as REST's
// If-Match does. Each row gets its own item, read (stale) and then changed
// once (fresh).
func TestConditionalMutations(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute = 100_000
		c.RateLimitPerHour = 100_000
	}))
	alice := env.Alice
	const (
		updateOp = `mutation($id: ID!, $m: String, $name: String) { updateItem(id: $id, input: {name: $name}, ifMatch: $m) { id name etag } }`
		deleteOp = `mutation($id: ID!, $m: String) { deleteItem(id: $id, ifMatch: $m) }`
	)
	type tags struct{ stale, fresh string }
	rows := []struct {
		name    string
		query   string
		rename  string // the new name; "n" changes nothing
		ifMatch func(tags) any
		code    string
		etag    string // updateItem's etag: "same", "moved"; "" for none
		gone    bool   // the item was deleted
	}{
		{name: "update without ifMatch", query: updateOp, rename: "changed", ifMatch: func(tags) any { return nil }, etag: "moved"},
		{name: "update ifMatch current", query: updateOp, rename: "changed", ifMatch: func(g tags) any { return g.fresh }, etag: "moved"},
		{name: "update ifMatch list naming current", query: updateOp, rename: "changed",
			ifMatch: func(g tags) any { return g.stale + ", " + g.fresh }, etag: "moved"},
		{name: "update ifMatch star", query: updateOp, rename: "changed", ifMatch: func(tags) any { return "*" }, etag: "moved"},
		{name: "update ifMatch current, nothing changes", query: updateOp, rename: "n",
			ifMatch: func(g tags) any { return g.fresh }, etag: "same"},
		{name: "update ifMatch stale", query: updateOp, rename: "changed",
			ifMatch: func(g tags) any { return g.stale }, code: "PRECONDITION_FAILED"},
		{name: "update ifMatch weak form of current", query: updateOp, rename: "changed",
			ifMatch: func(g tags) any { return "W/" + g.fresh }, code: "PRECONDITION_FAILED"},
		{name: "update ifMatch empty", query: updateOp, rename: "changed", ifMatch: func(tags) any { return "" }, code: "VALIDATION_ERROR"},
		{name: "update ifMatch unquoted", query: updateOp, rename: "changed",
			ifMatch: func(g tags) any { return g.fresh[1 : len(g.fresh)-1] }, code: "VALIDATION_ERROR"},
		{name: "delete ifMatch stale", query: deleteOp, ifMatch: func(g tags) any { return g.stale }, code: "PRECONDITION_FAILED"},
		{name: "delete ifMatch current", query: deleteOp, ifMatch: func(g tags) any { return g.fresh }, gone: true},
		{name: "delete without ifMatch", query: deleteOp, ifMatch: func(tags) any { return nil }, gone: true},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			created := testutil.GQL(t, env, alice.Token, `mutation { createItem(input: {name: "n"}) { id etag } }`, nil).OK(t)
			id := created.At(t, "createItem", "id").(string)
			var g tags
			g.stale = created.At(t, "createItem", "etag").(string)
			if rest := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: alice.Token}).Header.Get("ETag"); rest != g.stale {
				t.Fatalf("createItem's etag %q, REST's ETag %q", g.stale, rest)
			}
			// Changed through REST, so the fresh tag is REST's: one tag for both.
			g.fresh = env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: alice.Token,
				Body: map[string]any{"description": "moved"}}).Header.Get("ETag")
			if g.fresh == "" || g.fresh == g.stale {
				t.Fatalf("ETags before and after a change: %q, %q", g.stale, g.fresh)
			}

			vars := map[string]any{"id": id, "m": tc.ifMatch(g)}
			if tc.query == updateOp {
				vars["name"] = tc.rename
			}
			r := testutil.GQL(t, env, alice.Token, tc.query, vars)
			if r.Code() != tc.code {
				t.Fatalf("code %q, want %q\n%s", r.Code(), tc.code, r.Raw)
			}
			if tc.code != "" && r.Data != nil && r.Data["updateItem"] != nil {
				t.Errorf("a refused change returned data: %s", r.Raw)
			}

			after := testutil.GQL(t, env, alice.Token, `query($id: ID!) { item(id: $id) { name etag } }`, map[string]any{"id": id})
			switch {
			case tc.gone:
				if after.Code() != "NOT_FOUND" {
					t.Errorf("the item is still there: %s", after.Raw)
				}
			case tc.code != "":
				if after.OK(t).At(t, "item", "etag") != g.fresh || after.At(t, "item", "name") != "n" {
					t.Errorf("a refused change changed the item: %s", after.Raw)
				}
			case tc.etag == "same":
				if r.At(t, "updateItem", "etag") != g.fresh {
					t.Errorf("etag %v after no change, want %q", r.At(t, "updateItem", "etag"), g.fresh)
				}
			case tc.etag == "moved":
				got := r.At(t, "updateItem", "etag")
				if got == g.fresh || got != after.OK(t).At(t, "item", "etag") {
					t.Errorf("etag %v after a change from %q; item now says %v", got, g.fresh, after.At(t, "item", "etag"))
				}
			}
		})
	}
}

// TestConditionalEtagEverywhere: every way to reach an item (item, node,
// items, User.items) answers REST's ETag for it, even when etag is the only
// field asked (entgql then selects only the columns a query names).
func TestConditionalEtagEverywhere(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "n")
	want := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}).Header.Get("ETag")
	rows := []struct {
		name, query string
		path        []any
	}{
		{"item", `query($id: ID!) { item(id: $id) { etag } }`, []any{"item", "etag"}},
		{"node", `query($id: ID!) { node(id: $id) { ... on Item { etag } } }`, []any{"node", "etag"}},
		{"items", `{ items(first: 1) { edges { node { etag } } } }`, []any{"items", "edges", 0, "node", "etag"}},
		{"me.items", `{ me { items(first: 1) { edges { node { etag } } } } }`, []any{"me", "items", "edges", 0, "node", "etag"}},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			r := testutil.GQL(t, env, env.Alice.Token, tc.query, map[string]any{"id": id}).OK(t)
			if got := r.At(t, tc.path...); got != want {
				t.Errorf("etag %v, want REST's %q", got, want)
			}
		})
	}
}
