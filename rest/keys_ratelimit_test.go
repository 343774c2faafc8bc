package rest_test

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestKeyOwnRateLimit: a key whose admin set its own limit of 3 a minute
// gets 3 requests, then 429, with X-RateLimit-Limit 3, on REST and GraphQL
// alike (one budget), while keys without limits keep the server's; back
// to null, the key has the server's limit again at once. On the memory
// store and on Redis.
func TestKeyOwnRateLimit(t *testing.T) {
	for store, url := range rateStores(t) {
		t.Run(store, func(t *testing.T) {
			env := limited(t, url, 100, 1000, 20)
			carol := env.NewActor("carol@example.com", "Carol", false)
			me := func(name string, status int, check func(*testing.T, *testutil.Response)) testutil.Scenario {
				s := testutil.Scenario{Name: name, Method: "GET", Path: "/v1/users/me", Token: carol.Token, Status: status, Check: check}
				if status == http.StatusTooManyRequests {
					s.Code = "RATE_LIMITED"
				}
				return s
			}
			gql := func(remaining int) func(*testing.T, *testutil.Response) {
				return func(t *testing.T, _ *testutil.Response) {
					r := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: carol.Token, Body: map[string]any{"query": "{ me { id } }"}})
					window(3, remaining, time.Minute)(t, r)
					g := testutil.DecodeGQL(t, r).OK(t)
					cost := g.Extensions["cost"].(map[string]any)
					if cost["remaining"] != float64(remaining) || cost["window"] != "minute" {
						t.Errorf("extensions.cost = %v, want %d remaining of the minute", cost, remaining)
					}
				}
			}
			testutil.Run(t, env, []testutil.Scenario{
				{Name: "admin sets the key's own limit", Method: "PUT", Path: "/v1/keys/" + carol.KeyID, Token: env.Admin.Token,
					Body: map[string]any{"rate_limit_per_minute": 3}, Status: 200, Contains: []string{`"rate_limit_per_minute":3`}},
				me("request 1 against 3", 200, window(3, 2, time.Minute)),
				me("request 2 on REST, then 3 on GraphQL: one budget", 200, gql(0)),
				me("request 4 is refused", 429, refused("minute", 3, time.Minute)),
				{Name: "a key without limits keeps the server's", Method: "GET", Path: "/v1/users/me", Token: env.Bob.Token, Status: 200,
					Check: window(100, 99, time.Minute)},
				{Name: "admin returns the key to the default", Method: "PUT", Path: "/v1/keys/" + carol.KeyID, Token: env.Admin.Token,
					Body: map[string]any{"rate_limit_per_minute": nil}, Status: 200, Contains: []string{`"rate_limit_per_minute":null`}},
				me("the server's limit holds at once, on the count so far", 200, func(t *testing.T, r *testutil.Response) {
					if got := r.Header.Get("X-RateLimit-Limit"); got != "100" {
						t.Errorf("X-RateLimit-Limit = %q, want 100", got)
					}
					if n, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining")); n < 90 || n > 96 {
						t.Errorf("X-RateLimit-Remaining = %d, want what is left of 100 after 5", n)
					}
				}),
			})
		})
	}
}

// TestKeyOwnRateLimitReplicas: a limit set through one replica holds on
// another within the key recheck, where the key's cached state is read
// again (the server that made the change drops it at once).
func TestKeyOwnRateLimitReplicas(t *testing.T) {
	recheck := testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = 200 * time.Millisecond })
	a := limited(t, "", 100, 1000, 20, recheck)
	other, err := app.New(context.Background(), a.App.Config, slog.New(slog.DiscardHandler), app.Options{Service: service.Options{KeyRecheck: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	b := &testutil.Env{T: t, App: other}
	carol := a.NewActor("carol@example.com", "Carol", false)
	limit := func(env *testutil.Env) string {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: carol.Token}).Header.Get("X-RateLimit-Limit")
	}
	if got := limit(b); got != "100" {
		t.Fatalf("replica B before the change: limit %q, want 100", got)
	}
	r := a.Do(testutil.Request{Method: "PUT", Path: "/v1/keys/" + carol.KeyID, Token: a.Admin.Token, Body: map[string]any{"rate_limit_per_minute": 50}})
	if r.Status != 200 {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	if got := limit(a); got != "50" {
		t.Fatalf("replica A after its change: limit %q, want 50 at once", got)
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool { return limit(b) == "50" }) {
		t.Fatalf("replica B never took the key's own limit: %q", limit(b))
	}
}

// TestKeyOwnRateLimitInherited: a key an admin limited to 3 a minute makes
// a new key, and the new key is limited to 3 a minute too: its own 3
// requests, then 429. A user cannot shed a limit by making keys (and only
// admins change a key's limits).
func TestKeyOwnRateLimitInherited(t *testing.T) {
	env := limited(t, "", 100, 1000, 20)
	carol := env.NewActor("carol@example.com", "Carol", false)
	var child struct{ Key string }
	me := func(name string, status int) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: "/v1/users/me", Status: status}
	}
	rows := []testutil.Scenario{
		{Name: "admin limits Carol's key to 3 a minute", Method: "PUT", Path: "/v1/keys/" + carol.KeyID, Token: env.Admin.Token,
			Body: map[string]any{"rate_limit_per_minute": 3}, Status: 200},
		{Name: "Carol's key makes a key: limited the same", Method: "POST", Path: "/v1/keys", Token: carol.Token, Body: map[string]any{},
			Status: 201, Contains: []string{`"rate_limit_per_minute":3`, `"rate_limit_per_hour":null`},
			Check: func(t *testing.T, r *testutil.Response) { r.Data(t, &child) }},
		{Name: "Carol may not lift it", Method: "PUT", Path: "/v1/keys/" + carol.KeyID, Token: carol.Token,
			Body: map[string]any{"rate_limit_per_minute": nil}, Status: 403, Code: "PERMISSION_DENIED"},
	}
	testutil.Run(t, env, rows)
	tok, err := env.App.Service.Login(t.Context(), child.Key)
	if err != nil {
		t.Fatal(err)
	}
	var sends []testutil.Scenario
	for i := 1; i <= 3; i++ {
		sends = append(sends, me("the new key's request "+strconv.Itoa(i)+" of 3", 200))
	}
	sends = append(sends, me("its fourth is refused", http.StatusTooManyRequests))
	sends[3].Code, sends[3].Check = "RATE_LIMITED", refused("minute", 3, time.Minute)
	for i := range sends {
		sends[i].Token = tok.AccessToken
	}
	testutil.Run(t, env, sends)
}
