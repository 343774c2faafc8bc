package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/idempotencykey"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// keyedRequest sends body to path (REST, or /graphql) as an actor with an
// Idempotency-Key.
func keyedRequest(env *testutil.Env, as testutil.Actor, path, body, key string) *testutil.Response {
	return env.Do(testutil.Request{Method: "POST", Path: path, Token: as.Token, Body: body, Headers: keyed(key)})
}

// gqlBody is a POST /graphql body of query and variables.
func gqlBody(t *testing.T, query string, vars map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayChecksTheCallerNow: a retry with a key is served only after
// the checks its request would pass now, as the caller is now, on REST and
// GraphQL alike: a read-only key of the same user gets the 403 the
// mutation itself gets (nothing of the first answer), a revoked key or a
// disabled user 401, an admin's request retried once demoted 403; another
// write key of the same user gets the replay.
func TestReplayChecksTheCallerNow(t *testing.T) {
	env := testutil.New(t)
	const (
		createKey  = `mutation { createAPIKey(input: {label: "minted"}) { id key scopes } }`
		createItem = `mutation($n: String!) { createItem(input: {name: $n}) { id name } }`
		updateItem = `mutation($id: ID!) { updateItem(id: $id, input: {name: "renamed"}) { id name description } }`
	)
	type setup struct {
		first, retry testutil.Actor
		path, body   string
	}
	revoke := func(t *testing.T, s setup) {
		r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/keys/" + s.first.KeyID, Token: env.Admin.Token})
		if r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
	}
	setUser := func(field string, value any) func(*testing.T, setup) {
		return func(t *testing.T, s setup) {
			r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/users/" + s.first.UserID, Token: env.Admin.Token,
				Body: map[string]any{field: value}})
			if r.Status != 200 {
				t.Fatalf("PUT user %s: %d %s", field, r.Status, r.Body)
			}
		}
	}
	readOnlyTwin := func(_ testutil.Actor, email string) testutil.Actor {
		return env.NewKeyActor(email, "Twin", false, testutil.ReadOnly)
	}
	rows := []struct {
		name string
		make func(t *testing.T, email string) setup
		// change happens between the request and its retry.
		change func(t *testing.T, s setup)
		status int
		code   string
		reason string
	}{
		{name: "GraphQL createAPIKey retried by the user's read-only key",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: readOnlyTwin(a, email), path: "/graphql", body: gqlBody(t, createKey, nil)}
			},
			status: 403, code: "PERMISSION_DENIED", reason: "read-only key"},
		{name: "GraphQL updateItem retried by the user's read-only key",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				id := env.CreateItem(a, "to rename")
				return setup{first: a, retry: readOnlyTwin(a, email), path: "/graphql", body: gqlBody(t, updateItem, map[string]any{"id": id})}
			},
			status: 403, code: "PERMISSION_DENIED", reason: "read-only key"},
		{name: "REST create retried by the user's read-only key",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: readOnlyTwin(a, email), path: "/v1/items", body: `{"name":"rest replay"}`}
			},
			status: 403, code: "PERMISSION_DENIED", reason: "read-only key"},
		{name: "GraphQL createItem retried by the user's other write key",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: env.NewActor(email, "Owner", false), path: "/graphql", body: gqlBody(t, createItem, map[string]any{"n": "twin"})}
			},
			status: 200},
		{name: "GraphQL createItem retried after its key was revoked",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: a, path: "/graphql", body: gqlBody(t, createItem, map[string]any{"n": "revoked"})}
			},
			change: revoke, status: 401},
		{name: "REST create retried after its user was disabled",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: a, path: "/v1/items", body: `{"name":"disabled"}`}
			},
			change: setUser("disabled", true), status: 401},
		{name: "GraphQL createAPIKey retried after its user was disabled",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Owner", false)
				return setup{first: a, retry: a, path: "/graphql", body: gqlBody(t, createKey, nil)}
			},
			change: setUser("disabled", true), status: 401},
		{name: "an admin's GraphQL updateItem of another's item retried once demoted",
			make: func(t *testing.T, email string) setup {
				a := env.NewActor(email, "Second Admin", true)
				id := env.CreateItem(env.Bob, "bob's")
				return setup{first: a, retry: a, path: "/graphql", body: gqlBody(t, updateItem, map[string]any{"id": id})}
			},
			change: setUser("role", "user"), status: 403, code: "PERMISSION_DENIED", reason: service.ReasonAdminReplay},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := row.make(t, fmt.Sprintf("replay%d@example.com", i))
			key := fmt.Sprintf("replay-%d", i)
			first := keyedRequest(env, s.first, s.path, s.body, key)
			if first.Status >= 300 || strings.Contains(string(first.Body), `"errors"`) {
				t.Fatalf("first request: %d %s", first.Status, first.Body)
			}
			if row.change != nil {
				row.change(t, s)
			}
			r := keyedRequest(env, s.retry, s.path, s.body, key)
			if r.Status != row.status {
				t.Fatalf("retry: %d, want %d: %s", r.Status, row.status, r.Body)
			}
			if row.status >= 400 {
				code, details := "", map[string]any{}
				if s.path == "/graphql" {
					g := testutil.DecodeGQL(t, r)
					if len(g.Errors) > 0 {
						code, details = g.Code(), g.Errors[0].Extensions
					}
					if g.Data != nil {
						t.Errorf("the refused retry answers data: %s", r.Body)
					}
				} else {
					code = r.ErrorCode()
					var env struct {
						Error struct{ Details map[string]any }
					}
					testutil.MustJSON(t, r.Body, &env)
					details = env.Error.Details
				}
				if row.code != "" && (code != row.code || details["reason"] != row.reason) {
					t.Errorf("retry: %s %v, want %s reason %q: %s", code, details["reason"], row.code, row.reason, r.Body)
				}
				if r.Header.Get("Idempotent-Replayed") != "" {
					t.Errorf("a refused retry is marked Idempotent-Replayed")
				}
				// Nothing of the first answer: no id, name or secret it made.
				var firstData map[string]any
				if s.path == "/graphql" {
					firstData = testutil.DecodeGQL(t, first).Data
				} else {
					firstData = first.JSON(t)
				}
				for _, v := range leaves(firstData) {
					if len(v) > 8 && strings.Contains(string(r.Body), v) {
						t.Errorf("the refused retry carries %q of the first answer: %s", v, r.Body)
					}
				}
				return
			}
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry not replayed: %v %s", r.Header, r.Body)
			}
		})
	}
}

// leaves lists the string values in v, however deep.
func leaves(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, leaves(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return nil
}

// TestReplayKeepsNoSecret: the record of a request whose answer shows a
// secret (a new API key, a webhook's signing secret, a rotated one) keeps
// no trace of it, on either API, and a retry answers the resource as it
// was made without the secret: null in GraphQL (the field is selected),
// absent on REST (as GET shows the endpoint), marked Idempotent-Replayed.
func TestReplayKeepsNoSecret(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = publicDNS }))
	hook := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token, Body: `{"url":"https://hooks.example.com/rotated"}`})
	if hook.Status != 201 {
		t.Fatalf("%d %s", hook.Status, hook.Body)
	}
	var ep struct{ ID string }
	hook.Data(t, &ep)
	rows := []struct {
		name, path, body string
		status           int
		// secret finds the secret in an answer; "" when it has none.
		secret func(t *testing.T, r *testutil.Response) string
	}{
		{name: "GraphQL createAPIKey", path: "/graphql", status: 200,
			body:   gqlBody(t, `mutation { createAPIKey(input: {label: "once"}) { id key } }`, nil),
			secret: gqlString("createAPIKey", "key")},
		{name: "GraphQL createAPIKey, the secret under an alias", path: "/graphql", status: 200,
			body:   gqlBody(t, `mutation { k: createAPIKey(input: {label: "aliased"}) { id s: key } }`, nil),
			secret: gqlString("k", "s")},
		{name: "GraphQL createWebhook", path: "/graphql", status: 200,
			body:   gqlBody(t, `mutation { createWebhook(input: {url: "https://hooks.example.com/g"}) { id secret } }`, nil),
			secret: gqlString("createWebhook", "secret")},
		{name: "GraphQL rotateWebhookSecret", path: "/graphql", status: 200,
			body:   gqlBody(t, `mutation($id: ID!) { rotateWebhookSecret(id: $id) { id secret } }`, map[string]any{"id": ep.ID}),
			secret: gqlString("rotateWebhookSecret", "secret")},
		{name: "REST POST /v1/webhooks", path: "/v1/webhooks", status: 201,
			body: `{"url":"https://hooks.example.com/r"}`,
			secret: func(t *testing.T, r *testutil.Response) string {
				var w struct{ Secret string }
				r.Data(t, &w)
				return w.Secret
			}},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			key := fmt.Sprintf("secret-%d", i)
			first := keyedRequest(env, env.Alice, row.path, row.body, key)
			secret := row.secret(t, first)
			if first.Status != row.status || secret == "" {
				t.Fatalf("first: %d, secret %q: %s", first.Status, secret, first.Body)
			}
			rec, err := env.App.Service.Client().IdempotencyKey.Query().
				Where(idempotencykey.UserID(env.Alice.UserID), idempotencykey.Key(key)).Only(sys)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(rec.Body, "{") || strings.Contains(rec.Body, secret) {
				t.Errorf("the record keeps %q, want the JSON answer without the secret", rec.Body)
			}
			again := keyedRequest(env, env.Alice, row.path, row.body, key)
			if again.Status != row.status || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: %d %q: %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
			}
			if got := row.secret(t, again); got != "" || strings.Contains(string(again.Body), secret) {
				t.Errorf("the retry shows the secret: %s", again.Body)
			}
			if row.path == "/graphql" && !strings.Contains(string(again.Body), `null`) {
				t.Errorf("the retry's secret field is not null: %s", again.Body)
			}
			if row.path != "/graphql" && strings.Contains(string(again.Body), `"secret"`) {
				t.Errorf("the REST retry has a secret member: %s", again.Body)
			}
		})
	}
}

// gqlString reads the string at data.field.sub of a GraphQL answer; "" when
// it is null or absent.
func gqlString(field, sub string) func(t *testing.T, r *testutil.Response) string {
	return func(t *testing.T, r *testutil.Response) string {
		g := testutil.DecodeGQL(t, r)
		obj, _ := g.Data[field].(map[string]any)
		s, _ := obj[sub].(string)
		return s
	}
}

// TestIdempotencyOrdinaryClient: a client that keys every create, at its
// full rate limit, is never refused for what the server keeps for
// replays: 24,000 keyed creates for one user (the default hourly limit
// × the 24 h a record is kept; limits raised only for speed) all succeed,
// each record within service.MaxIdempotentRecord. On PostgreSQL the count
// is scaled down to 1,000 for time (each create there waits for its
// commit to reach the disk); the bound per record is the same.
func TestIdempotencyOrdinaryClient(t *testing.T) {
	n := 24000
	if testutil.OnPostgres() {
		n = 1000
	}
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 1_000_000, 1_000_000
	}))
	start := time.Now()
	for i := range n {
		// Through the real router, without the OpenAPI check of every
		// exchange (the contract tests check these answers).
		req := httptest.NewRequest("POST", "/v1/items", strings.NewReader(`{"name":"keyed"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("create-%d", i))
		rec := httptest.NewRecorder()
		env.App.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	t.Logf("%d keyed creates in %v", n, time.Since(start))
	recs, err := env.App.Service.Client().IdempotencyKey.Query().Where(idempotencykey.UserID(env.Alice.UserID)).All(sys)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Errorf("%d records, want %d", len(recs), n)
	}
	for _, rec := range recs {
		if len(rec.Body) > service.MaxIdempotentRecord {
			t.Fatalf("record %q keeps %d bytes, want at most %d", rec.Key, len(rec.Body), service.MaxIdempotentRecord)
		}
	}
}
