package server_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// aliases repeats field n times under aliases a0…, inside wrap ("%s").
func aliases(n int, wrap, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	return fmt.Sprintf(wrap, b.String())
}

// typeFragment is the fragment of the introspection attack: each alias of
// types{...F} writes the whole schema's types again, so a few aliases make
// a large answer.
const typeFragment = ` fragment F on __Type { name fields { name args { name } type { name ofType { name fields { name } } } } inputFields { name type { name ofType { name ofType { name inputFields { name } } } } } }`

// TestAttacks replays, scaled to run in seconds, the requests that once
// exhausted the server: each is refused before any resolver touches the
// database, with a small answer, little memory and nothing written.
func TestAttacks(t *testing.T) {
	var statements atomic.Int64
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) {
		o.WrapDriver = func(d dialect.Driver) dialect.Driver {
			return dialect.DebugWithContext(d, func(ctx context.Context, _ ...any) {
				if _, ok := viewer.FromContext(ctx); ok {
					statements.Add(1)
				}
			})
		}
	}))
	env.CreateItem(env.Alice, "a")

	scan := `items(first: 0, where: {descriptionContainsFold: "zz0"}) { totalCount }`
	cases := []struct {
		name  string
		token string
		query string
		code  string
	}{
		{"introspection amplification: 6,000 aliases", "", aliases(6000, "{ __schema { %s } }", "types { ...F }") + typeFragment, "VALIDATION_ERROR"},
		{"introspection amplification: 1,300 aliases", "", aliases(1300, "{ __schema { %s } }", "types { ...F }") + typeFragment, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"introspection amplification: 150 aliases", "", aliases(150, "{ __schema { %s } }", "types { ...F }") + typeFragment, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"introspection amplification with a token", env.Alice.Token, aliases(150, "{ __schema { %s } }", "types { ...F }") + typeFragment, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"scans in aliases: 999", env.Admin.Token, aliases(999, "{ %s }", scan), "VALIDATION_ERROR"},
		{"scans in aliases: 150", env.Admin.Token, aliases(150, "{ %s }", scan), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"scans in aliases: 150, as a user", env.Alice.Token, aliases(150, "{ %s }", scan), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"aliased mutations: 400 creates", env.Alice.Token, aliases(400, "mutation { %s }", `createItem(input: {name: "x"}) { id }`), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"aliased mutations: 99 creates", env.Alice.Token, aliases(99, "mutation { %s }", `createItem(input: {name: "x"}) { id }`), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"aliased mutations: 150 creates", env.Alice.Token, aliases(150, "mutation { %s }", `createItem(input: {name: "x"}) { id }`), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"unknown fields, anonymous", "", aliases(3000, "{ %s }", "nope"), "VALIDATION_ERROR"},
		{"unknown fields with a token", env.Alice.Token, aliases(1500, "{ me { %s } }", "nope"), "VALIDATION_ERROR"},
		{"data without a token", "", `{ items { totalCount } }`, "UNAUTHORIZED"},
		{"mutation without a token", "", `mutation { createItem(input: {name: "x"}) { id } }`, "UNAUTHORIZED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			statements.Store(0)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := testutil.GQL(t, env, c.token, c.query, nil)
			runtime.ReadMemStats(&after)
			if r.Code() != c.code {
				t.Fatalf("code %q, want %q: %.500s", r.Code(), c.code, r.Raw)
			}
			if n := statements.Load(); n != 0 {
				t.Errorf("%d statements ran for a refused operation", n)
			}
			if len(r.Raw) > 8<<10 {
				t.Errorf("refusal of %d bytes: %.300s", len(r.Raw), r.Raw)
			}
			if len(r.Errors) > 20 {
				t.Errorf("%d errors, want at most 20", len(r.Errors))
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing it allocated %d MiB", alloc>>20)
			}
		})
	}
	if got := total(t, env.Do(testutil.Request{Method: "GET", Path: "/v1/items", Token: env.Alice.Token})); got != 1 {
		t.Errorf("alice has %d items after the attacks, want 1", got)
	}
}

// total is meta.pagination.total of a REST list.
func total(t *testing.T, res *testutil.Response) int {
	t.Helper()
	meta, _ := res.JSON(t)["meta"].(map[string]any)
	pagination, _ := meta["pagination"].(map[string]any)
	n, ok := pagination["total"].(float64)
	if !ok {
		t.Fatalf("no meta.pagination.total: %s", res.Body)
	}
	return int(n)
}

// TestCostCharged: the rate limit spends an operation's points (1 per
// mutation field and per scan, at least 1), says so in the headers and in
// extensions.cost, and refuses one that does not fit without spending it.
func TestCostCharged(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute = 1000
		c.RateLimitPerHour = 10000
		c.GraphQLMaxComplexity = 100_000
	}))
	env.CreateItem(env.Alice, "a")
	remaining := func(res *testutil.Response) int {
		n, err := strconv.Atoi(res.Header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("X-RateLimit-Remaining %q", res.Header.Get("X-RateLimit-Remaining"))
		}
		return n
	}
	post := func(token, query string) (*testutil.Response, testutil.GQLResponse) {
		res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]any{"query": query}})
		return res, testutil.DecodeGQL(t, res)
	}
	cases := []struct {
		name   string
		query  string
		points int
	}{
		{"a plain read of one connection", `{ items(first: 20) { totalCount edges { node { id name description status createdAt updatedAt owner { id } } } } }`, 1},
		{"reads of several fields", `{ me { id items { totalCount } } items(where: {status: ACTIVE}) { totalCount } }`, 1},
		{"a filter that scans", `{ items(where: {nameContains: "a"}) { edges { node { id } } } }`, 1},
		{"a filter that scans, and its total", `{ items(where: {nameContains: "a"}) { totalCount } }`, 2},
		{"three mutations", aliases(3, "mutation { %s }", `createItem(input: {name: "x"}) { id }`), 3},
		{"150 mutations", aliases(150, "mutation { %s }", `createItem(input: {name: "x"}) { id }`), 150},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := remaining(env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token}))
			res, r := post(env.Alice.Token, c.query)
			r.OK(t)
			if spent := before - remaining(res); spent != c.points {
				t.Errorf("spent %d, want %d", spent, c.points)
			}
			cost, _ := r.Extensions["cost"].(map[string]any)
			if cost["points"] != float64(c.points) || cost["remaining"] != float64(remaining(res)) {
				t.Errorf("extensions.cost %v, want points %d and remaining %d", cost, c.points, remaining(res))
			}
		})
	}

	t.Run("an operation over the remaining budget is refused and spends nothing", func(t *testing.T) {
		small := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
			c.RateLimitPerMinute = 5
			c.GraphQLMaxComplexity = 100_000
		}))
		res := small.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: small.Alice.Token,
			Body: map[string]any{"query": aliases(150, "mutation { %s }", `createItem(input: {name: "x"}) { id }`)}})
		r := testutil.DecodeGQL(t, res)
		if res.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" || res.Header.Get("Retry-After") == "" {
			t.Fatalf("%d %s %.300s", res.Status, res.Header, r.Raw)
		}
		list := small.Do(testutil.Request{Method: "GET", Path: "/v1/items", Token: small.Alice.Token})
		if got := total(t, list); got != 0 {
			t.Errorf("%d items created by a refused operation", got)
		}
		if got := list.Header.Get("X-RateLimit-Remaining"); got != "4" {
			t.Errorf("remaining %s after the refusal and one list, want 4", got)
		}
	})
}

// TestAnonymous: without a token only login and introspection run, charged
// per client address; introspection needs a token with the playground off.
func TestAnonymous(t *testing.T) {
	const perMinute = 5
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.GraphQLAnonPerMinute = perMinute }))
	off := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.Playground = false }))
	schema := `{ __schema { queryType { name } } }`
	cases := []struct {
		name   string
		env    *testutil.Env
		token  string
		query  string
		status int
		code   string
	}{
		{"introspection", env, "", schema, 200, ""},
		{"__type", env, "", `{ __type(name: "Item") { fields { name } } }`, 200, ""},
		{"login", env, "", fmt.Sprintf(`mutation { login(apiKey: %q) { accessToken } }`, env.Alice.Key), 200, ""},
		{"data", env, "", `{ me { id } }`, 401, "UNAUTHORIZED"},
		{"data beside introspection", env, "", `{ __schema { queryType { name } } items { totalCount } }`, 401, "UNAUTHORIZED"},
		{"a mutation other than login", env, "", `mutation { deleteItem(id: "item_x") }`, 401, "UNAUTHORIZED"},
		{"playground off: introspection without a token", off, "", schema, 401, "UNAUTHORIZED"},
		{"playground off: introspection with a token", off, off.Alice.Token, schema, 200, ""},
		{"playground off: login", off, "", fmt.Sprintf(`mutation { login(apiKey: %q) { accessToken } }`, off.Alice.Key), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, c.env, c.token, c.query, nil)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("%d %q, want %d %q: %s", r.Status, r.Code(), c.status, c.code, r.Raw)
			}
		})
	}

	t.Run("limited per address", func(t *testing.T) {
		fresh := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.GraphQLAnonPerMinute = perMinute }))
		for range perMinute {
			testutil.GQL(t, fresh, "", `{ __typename }`, nil).OK(t)
		}
		r := testutil.GQL(t, fresh, "", `{ __typename }`, nil)
		if r.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		// The limit is the address's, not the keys': a token still works.
		testutil.GQL(t, fresh, fresh.Alice.Token, `{ me { id } }`, nil).OK(t)
	})
	t.Run("aliased logins are each charged", func(t *testing.T) {
		fresh := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.GraphQLAnonPerMinute = perMinute }))
		q := aliases(perMinute+1, "mutation { %s }", fmt.Sprintf(`login(apiKey: %q) { accessToken }`, fresh.Alice.Key))
		if r := testutil.GQL(t, fresh, "", q, nil); r.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

// TestDeadline: a request that outlives REQUEST_TIMEOUT fails with 503
// UNAVAILABLE, reason timeout, on REST and GraphQL: never a 500.
func TestDeadline(t *testing.T) {
	slow := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.RequestTimeout = 1 }))
	res := slow.Do(testutil.Request{Method: "GET", Path: "/v1/items", Token: slow.Alice.Token})
	if res.Status != http.StatusServiceUnavailable || res.ErrorCode() != "UNAVAILABLE" || !strings.Contains(string(res.Body), `"reason":"timeout"`) {
		t.Fatalf("REST: %d %s", res.Status, res.Body)
	}
	r := testutil.GQL(t, slow, slow.Alice.Token, `{ items { totalCount } }`, nil)
	if r.Code() != "UNAVAILABLE" || r.Errors[0].Extensions["reason"] != "timeout" {
		t.Fatalf("GraphQL: %d %s", r.Status, r.Raw)
	}
}

// TestCostKept: an operation without variables is priced once and costs the
// same on every request of it, over the limit or not; one with variables
// is priced with each request's.
func TestCostKept(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.GraphQLMaxComplexity = 200 }))
	env.CreateItem(env.Alice, "a")
	complexity := func(query string, vars map[string]any) any {
		r := testutil.GQL(t, env, env.Alice.Token, query, vars)
		if r.Code() != "" {
			return r.Code()
		}
		cost, _ := r.OK(t).Extensions["cost"].(map[string]any)
		return cost["complexity"]
	}
	const byVariable = `query($n: Int) { items(first: $n) { edges { node { id } } } }`
	for _, step := range []struct {
		query string
		vars  map[string]any
		want  any
	}{
		{`{ items(first: 5) { edges { node { id } } } }`, nil, float64(12)},
		{`{ items(first: 5) { edges { node { id } } } }`, nil, float64(12)},
		{`{ items(first: 100) { edges { node { id name description } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED"},
		{`{ items(first: 100) { edges { node { id name description } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED"},
		{byVariable, map[string]any{"n": 5}, float64(12)},
		{byVariable, map[string]any{"n": 10}, float64(22)},
		{byVariable, map[string]any{"n": 5}, float64(12)},
		{byVariable, map[string]any{"n": 100}, "COMPLEXITY_LIMIT_EXCEEDED"},
		{byVariable, map[string]any{"n": 5}, float64(12)},
	} {
		if got := complexity(step.query, step.vars); got != step.want {
			t.Errorf("%s %v: %v, want %v", step.query, step.vars, got, step.want)
		}
	}
}
