package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// nested returns a where filter nested n levels deep through not.
func nested(n int) map[string]any {
	w := map[string]any{"nameContains": "a"}
	for range n - 1 {
		w = map[string]any{"not": w}
	}
	return w
}

// nestedAnd returns a where filter nested n levels deep through and: two
// levels of JSON (an object and a list) each.
func nestedAnd(n int) map[string]any {
	w := map[string]any{"nameContains": "a"}
	for range n - 1 {
		w = map[string]any{"and": []any{w}}
	}
	return w
}

// anonymous is r without a token.
func anonymous(r testutil.Request) testutil.Request {
	r.Token = ""
	return r
}

// repeat returns a list of n copies of v.
func repeat(n int, v any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestBounds probes every connection and every filter: each page is
// bounded (default 20, at most 100) wherever the connection appears, priced
// as gqlgen will decode its arguments, and a filter out of its bounds is a
// VALIDATION_ERROR naming the field, never an INTERNAL_ERROR, on SQLite and
// on PostgreSQL.
func TestBounds(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute = 100_000
		c.RateLimitPerHour = 100_000
	}))
	const items = defaultPage + 5
	ctx := viewer.NewContext(context.Background(), viewer.Viewer{UserID: env.Alice.UserID, KeyID: env.Alice.KeyID, Role: viewer.RoleUser})
	for i := range items {
		name := fmt.Sprintf("item %d", i)
		if _, err := env.App.Service.CreateItem(ctx, ent.CreateItemInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	const connection = `{ edges { node { id } } }`
	twoLevels := `query($n: Int) { items(first: $n) { edges { node { owner { items(first: $n) ` + connection + ` } } } } }`
	deferred := `{ me { id ... @defer { items { totalCount } } } }`
	cases := []struct {
		name  string
		req   testutil.Request
		code  string // "" for success
		field string
		nodes int // nodes under the last connection of the response, when it succeeds
	}{
		// Every connection is bounded.
		{"User.items without first is a page of 20", gqlPost(env, `{ me { items `+connection+` } }`, nil), "", "", defaultPage},
		{"User.items first 50000", gqlPost(env, `{ me { items(first: 50000) `+connection+` } }`, nil), "VALIDATION_ERROR", "first", 0},
		{"User.items last 101", gqlPost(env, `{ me { items(last: 101) `+connection+` } }`, nil), "VALIDATION_ERROR", "last", 0},
		{"User.items first -1", gqlPost(env, `{ me { items(first: -1) `+connection+` } }`, nil), "VALIDATION_ERROR", "first", 0},
		{"User.items first and last", gqlPost(env, `{ me { items(first: 1, last: 1) `+connection+` } }`, nil), "VALIDATION_ERROR", "last", 0},
		{"owner.items without first is a page of 20", gqlPost(env, `{ items(first: 1) { edges { node { owner { items `+connection+` } } } } }`, nil), "", "", defaultPage},
		{"owner.items first 100000", gqlPost(env, `{ items(first: 4) { edges { node { owner { items(first: 100000) `+connection+` } } } } }`, nil), "VALIDATION_ERROR", "first", 0},
		{"a null first is the default page", gqlPost(env, `query($n: Int) { me { items(first: $n) `+connection+` } }`, map[string]any{"n": nil}), "", "", defaultPage},
		{"a page through a fragment", gqlPost(env, `{ me { ...F } } fragment F on User { items `+connection+` }`, nil), "", "", defaultPage},

		// Prices and bounds apply to the value gqlgen decodes.
		{"Int variable as the string 100, two levels", gqlPost(env, twoLevels, map[string]any{"n": "100"}), "COMPLEXITY_LIMIT_EXCEEDED", "", 0},
		{"Int variable as the number 100, two levels", gqlPost(env, twoLevels, map[string]any{"n": 100}), "COMPLEXITY_LIMIT_EXCEEDED", "", 0},
		{"Int variable as the string 101", gqlPost(env, `query($n: Int) { me { items(first: $n) `+connection+` } }`, map[string]any{"n": "101"}), "VALIDATION_ERROR", "first", 0},
		{"Int variable as the string 3", gqlPost(env, `query($n: Int) { me { items(first: $n) `+connection+` } }`, map[string]any{"n": "3"}), "", "", 3},

		// Filters are bounded before any statement runs.
		{"nameContains of 50,001 bytes", gqlPost(env, `query($s: String) { items(where: {nameContains: $s}) `+connection+` }`, map[string]any{"s": strings.Repeat("a", 50_001)}), "VALIDATION_ERROR", "nameContains", 0},
		{"nameContains of 5,001 characters", gqlPost(env, `query($s: String) { items(where: {nameContains: $s}) `+connection+` }`, map[string]any{"s": strings.Repeat("é", 5_001)}), "VALIDATION_ERROR", "nameContains", 0},
		{"nameContains of 5,000 characters", gqlPost(env, `query($s: String) { items(where: {nameContains: $s}) `+connection+` }`, map[string]any{"s": strings.Repeat("é", 5_000)}), "", "", 0},
		{"descriptionHasPrefix with a NUL", gqlPost(env, `query($s: String) { items(where: {descriptionHasPrefix: $s}) `+connection+` }`, map[string]any{"s": "a\x00b"}), "VALIDATION_ERROR", "descriptionHasPrefix", 0},
		{"idIn of 70,000 values", gqlPost(env, `query($ids: [ID!]) { items(where: {idIn: $ids}) `+connection+` }`, map[string]any{"ids": repeat(70_000, "i")}), "VALIDATION_ERROR", "idIn", 0},
		{"userIDNotIn of 70,000 values, nested", gqlPost(env, `query($ids: [ID!]) { me { items(where: {or: [{userIDNotIn: $ids}]}) `+connection+` } }`, map[string]any{"ids": repeat(70_000, "u")}), "VALIDATION_ERROR", "userIDNotIn", 0},
		{"statusIn of 30,000 values", gqlPost(env, `query($s: [ItemStatus!]) { items(where: {statusIn: $s}) { totalCount } }`, map[string]any{"s": repeat(30_000, "ACTIVE")}), "VALIDATION_ERROR", "statusIn", 0},
		{"statusIn of 100 values", gqlPost(env, `query($s: [ItemStatus!]) { items(first: 2, where: {statusIn: $s}) `+connection+` }`, map[string]any{"s": repeat(100, "ACTIVE")}), "", "", 2},
		// A variable nested past what the schema can take is refused before
		// gqlgen coerces it, which costs CPU at every level (variables.go),
		// with or without a token; one within it reaches the filter's own
		// bound.
		{"where nested 4,900 levels", gqlPost(env, `query($w: ItemWhereInput) { items(where: $w) { totalCount } }`, map[string]any{"w": nested(4_900)}), "VALIDATION_ERROR", "variables", 0},
		{"where nested 4,900 levels without a token", anonymous(gqlPost(env, `query($w: ItemWhereInput) { items(where: $w) { totalCount } }`, map[string]any{"w": nestedAnd(4_900)})), "VALIDATION_ERROR", "variables", 0},
		{"where nested 16 levels of and", gqlPost(env, `query($w: ItemWhereInput) { items(where: $w) { totalCount } }`, map[string]any{"w": nestedAnd(16)}), "VALIDATION_ERROR", "where", 0},
		{"where nested 10 levels", gqlPost(env, `query($w: ItemWhereInput) { items(first: 1, where: $w) `+connection+` }`, map[string]any{"w": nested(10)}), "", "", 1},
		{"where of 1,001 terms", gqlPost(env, `query($w: [ItemWhereInput!]) { items(where: {or: $w}) { totalCount } }`, map[string]any{"w": repeat(100, map[string]any{"or": repeat(10, map[string]any{"nameContains": "a"})})}), "VALIDATION_ERROR", "where", 0},
		{"owner filter through hasOwnerWith", gqlPost(env, `query($s: String) { items(where: {hasOwnerWith: [{emailContains: $s}]}) { totalCount } }`, map[string]any{"s": strings.Repeat("x", 60_000)}), "VALIDATION_ERROR", "emailContains", 0},

		// An id that is not one of ours never reaches PostgreSQL.
		{"node id with a NUL", gqlPost(env, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": "item_\x00abc"}), "NOT_FOUND", "", 0},
		{"nodes ids with a NUL", gqlPost(env, `query($id: ID!) { nodes(ids: [$id]) { id } }`, map[string]any{"id": "user_\x00abc"}), "NOT_FOUND", "", 0},
		{"nodes of 101 ids", gqlPost(env, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": repeat(101, "item_x")}), "VALIDATION_ERROR", "ids", 0},

		// @defer is refused over every transport, before it runs.
		{"@defer over POST", gqlPost(env, deferred, nil), "VALIDATION_ERROR", "@defer", 0},
		{"@defer over GET", testutil.Request{Method: "GET", Path: "/graphql?query=" + url.QueryEscape(deferred), Token: env.Alice.Token}, "VALIDATION_ERROR", "@defer", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.DecodeGQL(t, env.Do(c.req))
			if r.Code() != c.code {
				t.Fatalf("status %d, code %q, want %q: %.600s", r.Status, r.Code(), c.code, r.Raw)
			}
			if c.code == "" {
				r.OK(t)
				if got := lastConnection(r.Data); got != c.nodes {
					t.Errorf("%d nodes, want %d: %.300s", got, c.nodes, r.Raw)
				}
				return
			}
			if r.Status >= 500 {
				t.Errorf("status %d: %.300s", r.Status, r.Raw)
			}
			if got, _ := r.Errors[0].Extensions["field"].(string); got != c.field {
				t.Errorf("field %q, want %q: %.300s", got, c.field, r.Raw)
			}
			if c.field != "" && r.Errors[0].Extensions["reason"] == nil {
				t.Errorf("no reason: %.300s", r.Raw)
			}
			if len(r.Raw) > 4<<10 {
				t.Errorf("refusal of %d bytes", len(r.Raw))
			}
		})
	}
}

// defaultPage is the default page size of every connection.
const defaultPage = 20

// gqlPost is a POST of one operation as Alice.
func gqlPost(env *testutil.Env, query string, vars map[string]any) testutil.Request {
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	return testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: body}
}

// lastConnection counts the nodes of the innermost edges list of the first
// path through data.
func lastConnection(v any) int {
	n := -1
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if edges, ok := v["edges"].([]any); ok {
				n = len(edges)
				if len(edges) > 0 {
					walk(edges[0])
				}
				return
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			if len(v) > 0 {
				walk(v[0])
			}
		}
	}
	walk(v)
	return max(n, 0)
}

// TestDeferRefusedOnStreams: @defer is refused before the operation runs
// over the streaming transports too (SSE and graphql-ws), naming it.
func TestDeferRefusedOnStreams(t *testing.T) {
	env := testutil.New(t)
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	const query = `subscription { itemEvents { id ... @defer { type } } }`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("sse", func(t *testing.T) {
		resp := testutil.PostSSE(ctx, t, srv, env.Alice.Token, query, nil)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body) // the stream ends after its error
		if !strings.Contains(string(out), `"code":"VALIDATION_ERROR"`) || !strings.Contains(string(out), `"field":"@defer"`) {
			t.Fatalf("%d %s", resp.StatusCode, out)
		}
	})
	t.Run("graphql-ws", func(t *testing.T) {
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + env.Alice.Token})
		payload, _ := json.Marshal(map[string]any{"query": query})
		for _, m := range []wsMsg{{Type: "connection_init", Payload: init}, {ID: "1", Type: "subscribe", Payload: payload}} {
			if err := wsjson.Write(ctx, conn, m); err != nil {
				t.Fatal(err)
			}
		}
		for {
			var m wsMsg
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				t.Fatalf("no error message: %v", err)
			}
			if m.Type == "connection_ack" || m.Type == "ping" {
				continue
			}
			if m.Type != "error" || !strings.Contains(string(m.Payload), `"code":"VALIDATION_ERROR"`) || !strings.Contains(string(m.Payload), `"field":"@defer"`) {
				t.Fatalf("%s %s", m.Type, m.Payload)
			}
			return
		}
	})
}

// TestFilterPrices: a where filter costs 1 per field given and 1 per 10
// list values, 100 more when it scans, and a point of the rate limit per
// 100 terms, on top of the operation's own.
func TestFilterPrices(t *testing.T) {
	env := testutil.New(t)
	env.CreateItem(env.Alice, "a")
	const query = `query($w: ItemWhereInput) { items(first: 1, where: $w) { edges { node { id } } } }`
	ids := make([]any, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("item_%d", i)
	}
	cases := []struct {
		name               string
		where              map[string]any
		complexity, points float64
	}{
		{"no filter", nil, 4, 1},
		{"status", map[string]any{"status": "ACTIVE"}, 5, 1},
		{"statusIn of 100 values", map[string]any{"statusIn": repeat(100, "ACTIVE")}, 4 + 1 + 10, 2},
		{"not nested 10 levels", nested(10), 4 + 10 + 100, 1},
		{"idIn of 100 values", map[string]any{"idIn": ids}, 4 + 1 + 10 + 100, 2},
		{"or of 100 conditions", map[string]any{"or": repeat(100, map[string]any{"nameContains": "a"})}, 4 + 101 + 10 + 100, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var vars map[string]any
			if c.where != nil {
				vars = map[string]any{"w": c.where}
			}
			r := testutil.GQL(t, env, env.Alice.Token, query, vars).OK(t)
			cost, _ := r.Extensions["cost"].(map[string]any)
			if cost["complexity"] != c.complexity || cost["points"] != c.points {
				t.Errorf("cost %v, want complexity %v and points %v", cost, c.complexity, c.points)
			}
		})
	}
}
