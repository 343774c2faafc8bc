package graph_test

import (
	"slices"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestWebhookConnections: what the webhooks, deliveries and events
// connections do that REST's lists have no twin for: a page of none, a
// cursor of another connection, pages after a cursor that rows added in
// between do not shift, and deliveries read for each webhook of a page.
func TestWebhookConnections(t *testing.T) {
	env := newParityEnv(t)
	alice := env.Alice
	hooks := []string{env.hook(alice, "a", true), env.hook(alice, "b", true), env.hook(alice, "c", true)}
	withDeliveries, _ := env.failing(alice, "d")
	hooks = append(hooks, withDeliveries)
	slices.Reverse(hooks) // newest first
	env.WaitPublished()

	itemCursor := testutil.GQL(t, env.Env, alice.Token, `{ items(first: 1) { edges { cursor } } }`, nil).OK(t).At(t, "items", "edges", 0, "cursor")
	webhookCursor := testutil.GQL(t, env.Env, alice.Token, `{ webhooks(first: 1) { edges { cursor } } }`, nil).OK(t).At(t, "webhooks", "edges", 0, "cursor")

	cases := []struct {
		name  string
		query string
		vars  map[string]any
		code  string // "" on success
		field string
		check func(t *testing.T, r testutil.GQLResponse)
	}{
		{name: "webhooks: first 0 is a page of none, with what follows", query: `{ webhooks(first: 0) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } }`,
			check: func(t *testing.T, r testutil.GQLResponse) {
				if len(r.IDs(t, "webhooks")) != 0 || r.At(t, "webhooks", "pageInfo", "hasNextPage") != true || r.At(t, "webhooks", "totalCount") != float64(len(hooks)) {
					t.Errorf("%s", r.Raw)
				}
			}},
		{name: "events: first 0 is a page of none, with what follows", query: `{ events(first: 0) { pageInfo { hasNextPage endCursor } edges { node { id } } } }`,
			check: func(t *testing.T, r testutil.GQLResponse) {
				if len(r.IDs(t, "events")) != 0 || r.At(t, "events", "pageInfo", "hasNextPage") != true || r.At(t, "events", "pageInfo", "endCursor") != nil {
					t.Errorf("%s", r.Raw)
				}
			}},
		{name: "webhooks: an item's cursor", query: `query($c: Cursor) { webhooks(after: $c) { totalCount } }`, vars: map[string]any{"c": itemCursor},
			code: "VALIDATION_ERROR", field: "after"},
		{name: "deliveries: a webhook's cursor", query: `query($id: ID!, $c: Cursor) { webhook(id: $id) { deliveries(after: $c) { totalCount } } }`,
			vars: map[string]any{"id": withDeliveries, "c": webhookCursor}, code: "VALIDATION_ERROR", field: "after"},
		{name: "events: a webhook's cursor", query: `query($c: Cursor) { events(after: $c) { edges { cursor } } }`, vars: map[string]any{"c": webhookCursor},
			code: "VALIDATION_ERROR", field: "after"},
		{name: "webhooks: not a cursor", query: `{ webhooks(after: "abc") { totalCount } }`, code: "VALIDATION_ERROR", field: "after"},
		{name: "webhooks: deliveries of each webhook of a page", query: `{ webhooks { edges { node { id deliveries { totalCount } } } } }`,
			check: func(t *testing.T, r testutil.GQLResponse) {
				for i, e := range r.At(t, "webhooks", "edges").([]any) {
					node := e.(map[string]any)["node"].(map[string]any)
					want := 0.0
					if node["id"] == withDeliveries {
						want = 3
					}
					if got := r.At(t, "webhooks", "edges", i, "node", "deliveries", "totalCount"); got != want {
						t.Errorf("%s: %v deliveries, want %v", node["id"], got, want)
					}
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, env.Env, alice.Token, c.query, c.vars)
			if c.code == "" {
				r.OK(t)
			} else if r.Code() != c.code || r.Errors[0].Extensions["field"] != c.field {
				t.Fatalf("want %s on %s: %s", c.code, c.field, r.Raw)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}

	t.Run("webhooks: a page after a cursor is not shifted by a webhook added before it", func(t *testing.T) {
		const page = `query($after: Cursor) { webhooks(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id } } } }`
		first := testutil.GQL(t, env.Env, alice.Token, page, nil).OK(t)
		added := env.hook(alice, "added", true) // newest: before every page
		second := testutil.GQL(t, env.Env, alice.Token, page, map[string]any{"after": first.At(t, "webhooks", "pageInfo", "endCursor")}).OK(t)
		got := append(first.IDs(t, "webhooks"), second.IDs(t, "webhooks")...)
		if !slices.Equal(got, hooks) || second.At(t, "webhooks", "pageInfo", "hasNextPage") != false {
			t.Errorf("pages %v, want %v (the webhook added, %s, in neither)", got, hooks, added)
		}
	})
}
