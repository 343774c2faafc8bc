package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/idempotencykey"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// sys reads and writes every row, as the service's system context does.
var sys = privacy.DecisionContext(context.Background(), privacy.Allow)

// itemsNamed counts the items of a user with a name.
func itemsNamed(t *testing.T, env *testutil.Env, userID, name string) int {
	t.Helper()
	n, err := env.App.Service.Client().Item.Query().Where(item.UserID(userID), item.Name(name)).Count(sys)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// eventsOf counts the events of an item.
func eventsOf(t *testing.T, env *testutil.Env, itemID string) int {
	t.Helper()
	n, err := env.App.Service.Client().Event.Query().Where(event.ItemID(itemID)).Count(sys)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func keyed(key string) map[string]string { return map[string]string{"Idempotency-Key": key} }

// TestIdempotencyKeyContract has one row per case of DESIGN §7's
// Idempotency-Key, in order: each row may rely on the rows before it.
func TestIdempotencyKeyContract(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = publicDNS }))
	alice, bob := env.Alice, env.Bob
	var first *testutil.Response
	key255 := strings.Repeat("k", 255) // the longest key: 255 printable ASCII characters
	key256 := strings.Repeat("k", 256)

	rows := []struct {
		name    string
		as      testutil.Actor
		path    string
		body    string
		key     string // "" sends no header
		status  int
		code    string
		replay  bool
		check   func(t *testing.T, r *testutil.Response)
		noCheck bool
	}{
		{name: "without the header two POSTs make two items", as: alice, body: `{"name":"plain"}`, status: 201,
			check: func(t *testing.T, r *testutil.Response) {
				env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"plain"}`})
				if n := itemsNamed(t, env, alice.UserID, "plain"); n != 2 {
					t.Errorf("%d items, want 2", n)
				}
			}},
		{name: "first request with a key creates", as: alice, body: `{"name":"once","description":"d"}`, key: "k1", status: 201,
			check: func(t *testing.T, r *testutil.Response) { first = r }},
		{name: "same key same request replays status, body and Location", as: alice,
			body: "{ \"description\": \"d\",\n \"name\": \"once\" }", key: "k1", status: 201, replay: true,
			check: func(t *testing.T, r *testutil.Response) {
				if string(r.Body) != string(first.Body) {
					t.Errorf("body\n%s\nwant\n%s", r.Body, first.Body)
				}
				if r.Header.Get("Location") != first.Header.Get("Location") || r.Header.Get("Location") == "" {
					t.Errorf("Location = %q, want %q", r.Header.Get("Location"), first.Header.Get("Location"))
				}
				if n := itemsNamed(t, env, alice.UserID, "once"); n != 1 {
					t.Errorf("%d items, want 1", n)
				}
				var it struct{ ID string }
				r.Data(t, &it)
				if n := eventsOf(t, env, it.ID); n != 1 {
					t.Errorf("%d events of the item, want 1: a replay emits none", n)
				}
			}},
		{name: "same key different body is 422", as: alice, body: `{"name":"other"}`, key: "k1", status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
		{name: "same key other route is 422", as: alice, path: "/v1/webhooks", body: `{"url":"https://hooks.example.com/hook"}`, key: "k1",
			status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
		{name: "keys are scoped per user", as: bob, body: `{"name":"once","description":"d"}`, key: "k1", status: 201,
			check: func(t *testing.T, r *testutil.Response) {
				if n := itemsNamed(t, env, bob.UserID, "once"); n != 1 {
					t.Errorf("bob has %d items, want 1", n)
				}
			}},
		{name: "a 255-character key", as: alice, body: `{"name":"long key"}`, key: key255, status: 201},
		{name: "the 255-character key replays", as: alice, body: `{"name":"long key"}`, key: key255, status: 201, replay: true},
		{name: "a 256-character key is refused", as: alice, body: `{"name":"too long key"}`, key: key256, status: 400, code: "VALIDATION_ERROR",
			check: func(t *testing.T, r *testutil.Response) {
				if !strings.Contains(string(r.Body), `"field":"Idempotency-Key"`) {
					t.Errorf("body does not name the header: %s", r.Body)
				}
				if n := itemsNamed(t, env, alice.UserID, "too long key"); n != 0 {
					t.Errorf("%d items, want 0", n)
				}
			}},
		{name: "an empty key is refused", as: alice, body: `{"name":"x"}`, key: " ", status: 400, code: "VALIDATION_ERROR"},
		{name: "a failure is not recorded", as: alice, body: `{"name":""}`, key: "k2", status: 400, code: "VALIDATION_ERROR"},
		{name: "so the fixed request may reuse its key", as: alice, body: `{"name":"fixed"}`, key: "k2", status: 201},
		{name: "a webhook's creation replays without its secret", as: alice, path: "/v1/webhooks",
			body: `{"url":"https://hooks.example.com/hook"}`, key: "w1", status: 201,
			check: func(t *testing.T, r *testutil.Response) {
				again := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: alice.Token, Body: `{"url":"https://hooks.example.com/hook"}`, Headers: keyed("w1")})
				if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || strings.Contains(string(again.Body), `"secret"`) {
					t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Body)
				}
				if !strings.Contains(string(r.Body), `"secret":"whsec_`) {
					t.Fatalf("no secret in %s", r.Body)
				}
				rec, err := env.App.Service.Client().IdempotencyKey.Query().
					Where(idempotencykey.UserID(alice.UserID), idempotencykey.Key("w1")).Only(sys)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(rec.Body, "whsec_") {
					t.Errorf("the recorded response holds the secret in the clear")
				}
				n, err := env.App.Service.Client().WebhookEndpoint.Query().Count(sys)
				if err != nil || n != 1 {
					t.Errorf("%d endpoints (%v), want 1", n, err)
				}
			}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			path := row.path
			if path == "" {
				path = "/v1/items"
			}
			var h map[string]string
			if row.key != "" {
				h = keyed(row.key)
			}
			r := env.Do(testutil.Request{Method: "POST", Path: path, Token: row.as.Token, Body: row.body, Headers: h})
			if r.Status != row.status {
				t.Fatalf("status %d, want %d: %s", r.Status, row.status, r.Body)
			}
			if row.code != "" && r.ErrorCode() != row.code {
				t.Errorf("code %q, want %q", r.ErrorCode(), row.code)
			}
			if got := r.Header.Get("Idempotent-Replayed") == "true"; got != row.replay {
				t.Errorf("Idempotent-Replayed = %q, want replayed %v", r.Header.Get("Idempotent-Replayed"), row.replay)
			}
			if row.check != nil {
				row.check(t, r)
			}
		})
	}
}

// TestIdempotencyKeyInProgress: a key whose first request is still running
// is 409 with Retry-After; one whose server died (a claim older than the
// takeover age) is taken over by the retry, which creates exactly once.
func TestIdempotencyKeyInProgress(t *testing.T) {
	env := testutil.New(t)
	alice := env.Alice
	fp := service.Fingerprint([]byte("POST"), []byte("/v1/items"), []byte(`{"name":"busy"}`))
	claim := func(key string, at time.Time) {
		err := env.App.Service.Client().IdempotencyKey.Create().
			SetUserID(alice.UserID).SetKey(key).SetFingerprint(fp).SetState("running").SetClaim("other").
			SetCreatedAt(at).SetClaimedAt(at).SetExpiresAt(time.Now().Add(time.Hour)).Exec(sys)
		if err != nil {
			t.Fatal(err)
		}
	}
	claim("running", time.Now())
	claim("crashed", time.Now().Add(-time.Hour))
	cases := []struct {
		name, key string
		status    int
		code      string
		items     int
	}{
		{"the first request still runs", "running", 409, "IDEMPOTENCY_KEY_IN_USE", 0},
		{"its server died: the retry takes over", "crashed", 201, "", 1},
		{"and its next retry replays", "crashed", 201, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"busy"}`, Headers: keyed(c.key)})
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Fatalf("%d %s, want %d %s: %s", r.Status, r.ErrorCode(), c.status, c.code, r.Body)
			}
			if c.status == 409 && r.Header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After = %q, want 1", r.Header.Get("Retry-After"))
			}
			if n := itemsNamed(t, env, alice.UserID, "busy"); n != c.items {
				t.Errorf("%d items, want %d", n, c.items)
			}
		})
	}
}

// TestIdempotencyKeyLostResponse: the change and its record commit, then the
// response is lost (the client never reads it); the retry replays it, and
// nothing is made or emitted twice.
func TestIdempotencyKeyLostResponse(t *testing.T) {
	env := testutil.New(t)
	req := func() *http.Request {
		r := httptest.NewRequest("POST", "/v1/items", strings.NewReader(`{"name":"lost"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		r.Header.Set("Idempotency-Key", "lost-1")
		return r
	}
	env.App.Handler.ServeHTTP(discard{header: http.Header{}}, req())
	r := env.Serve(req())
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %q %s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	var it struct{ ID string }
	r.Data(t, &it)
	if n := itemsNamed(t, env, env.Alice.UserID, "lost"); n != 1 {
		t.Errorf("%d items, want 1", n)
	}
	if n := eventsOf(t, env, it.ID); n != 1 {
		t.Errorf("%d events, want 1", n)
	}
}

// discard is a client that went away: it takes the response and drops it.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// TestIdempotencyKeyConcurrent: ten requests with one key at once, on one
// server and on two replicas of one database, make exactly one item; each
// answer is the creation, its replay, or 409 while it runs.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d replicas", replicas), func(t *testing.T) {
			env := testutil.New(t)
			handlers := []http.Handler{env.App.Handler}
			if replicas == 2 {
				b, err := app.New(context.Background(), env.App.Config, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				handlers = append(handlers, b.Handler)
			}
			var wg sync.WaitGroup
			statuses := make([]int, 10)
			bodies := make([]string, 10)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := httptest.NewRequest("POST", "/v1/items", strings.NewReader(`{"name":"concurrent"}`))
					r.Header.Set("Content-Type", "application/json")
					r.Header.Set("Authorization", "Bearer "+env.Alice.Token)
					r.Header.Set("Idempotency-Key", "same")
					rec := httptest.NewRecorder()
					handlers[i%len(handlers)].ServeHTTP(rec, r)
					statuses[i], bodies[i] = rec.Code, rec.Body.String()
				}()
			}
			wg.Wait()
			created := ""
			for i, s := range statuses {
				switch {
				case s == 201 && created == "":
					created = bodies[i]
				case s == 201 && bodies[i] != created:
					t.Errorf("two different 201 bodies:\n%s\n%s", created, bodies[i])
				case s == 409 && strings.Contains(bodies[i], "IDEMPOTENCY_KEY_IN_USE"), s == 201:
				default:
					t.Errorf("answer %d: %d %s", i, s, bodies[i])
				}
			}
			if n := itemsNamed(t, env, env.Alice.UserID, "concurrent"); n != 1 {
				t.Errorf("%d items, want exactly 1 (statuses %v)", n, statuses)
			}
		})
	}
}

// TestIdempotencyReplayCharged: a replay spends the rate limit like any
// request.
func TestIdempotencyReplayCharged(t *testing.T) {
	env := testutil.New(t)
	remaining := func() string {
		r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: `{"name":"charged"}`, Headers: keyed("c1")})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-RateLimit-Remaining")
	}
	a, b := remaining(), remaining()
	if a == "" || a == b {
		t.Errorf("X-RateLimit-Remaining %q then %q: the replay was not charged", a, b)
	}
}

// TestIdempotencyKeysPruned: a record past IDEMPOTENCY_KEY_TTL is pruned,
// and its key is free again.
func TestIdempotencyKeysPruned(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: `{"name":"old"}`, Headers: keyed("p1")})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	c := env.App.Service.Client()
	if err := c.IdempotencyKey.Update().SetExpiresAt(time.Now().Add(-time.Second)).Exec(sys); err != nil {
		t.Fatal(err)
	}
	if n, err := env.App.Service.PruneIdempotencyKeys(context.Background()); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	r = env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: `{"name":"new"}`, Headers: keyed("p1")})
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("%d %q %s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
}

// TestIdempotencyKeyBytes: a key is printable ASCII; any other byte is 400
// VALIDATION_ERROR naming the header, on every route that takes a key and
// on every database (PostgreSQL would refuse to store one that is not
// UTF-8), and nothing is made.
func TestIdempotencyKeyBytes(t *testing.T) {
	env := testutil.New(t)
	routes := []struct{ path, body string }{
		{"/v1/items", `{"name":"keyed bytes"}`},
		{"/v1/webhooks", `{"url":"https://example.com/keyed-bytes"}`},
		{"/graphql", `{"query":"mutation { createItem(input: {name: \"keyed bytes\"}) { id } }"}`},
	}
	for _, key := range []string{"\xff\xfeKEY", "caf\xe9-key", "\xc0\xaf", "\x80abc", "café", "a\x00b", "tab\there", "del\x7f"} {
		for _, r := range routes {
			t.Run(fmt.Sprintf("%s %q", r.path, key), func(t *testing.T) {
				req := httptest.NewRequest("POST", r.path, strings.NewReader(r.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
				req.Header["Idempotency-Key"] = []string{key}
				res := env.Serve(req)
				var body struct {
					Error *struct {
						Code    string
						Details map[string]any
					} `json:"error"`
					Errors []struct{ Extensions map[string]any } `json:"errors"`
				}
				_ = json.Unmarshal(res.Body, &body)
				code, field := "", any(nil)
				switch {
				case body.Error != nil:
					code, field = body.Error.Code, body.Error.Details["field"]
				case len(body.Errors) > 0:
					code, _ = body.Errors[0].Extensions["code"].(string)
					field = body.Errors[0].Extensions["field"]
				}
				if res.Status != 400 || code != "VALIDATION_ERROR" || field != "Idempotency-Key" {
					t.Fatalf("%d %s %v, want 400 VALIDATION_ERROR on Idempotency-Key: %s", res.Status, code, field, res.Body)
				}
			})
		}
	}
	list := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?limit=100", Token: env.Alice.Token})
	if strings.Contains(string(list.Body), "keyed bytes") {
		t.Errorf("a refused request made an item: %s", list.Body)
	}
}
