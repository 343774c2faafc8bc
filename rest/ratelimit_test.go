package rest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// rateStores are the stores the rate-limit tests run on: memory always,
// Redis when TEST_REDIS_URL is set (required in CI).
func rateStores(t *testing.T) map[string]string {
	t.Helper()
	stores := map[string]string{"memory": ""}
	if os.Getenv("TEST_REDIS_URL") != "" || os.Getenv("REQUIRE_POSTGRES") == "1" {
		stores["redis"] = testutil.RedisURL(t)
	}
	return stores
}

// limited starts a server with small limits on a store (a Redis URL or ""
// for memory), its counters under a prefix of its own.
func limited(t *testing.T, redisURL string, perMinute, perHour, loginFailures int, more ...testutil.Option) *testutil.Env {
	t.Helper()
	opts := append([]testutil.Option{
		testutil.WithConfig(func(c *config.Config) {
			c.RedisURL = redisURL
			c.RateLimitPerMinute, c.RateLimitPerHour, c.LoginFailuresPerMin = perMinute, perHour, loginFailures
		}),
	}, more...)
	return testutil.New(t, opts...)
}

// window checks the rate-limit headers of a response: the limit and
// requests left of the reported window, and a ten-digit Reset about
// resetIn from now.
func window(limit, remaining int, resetIn time.Duration) func(*testing.T, *testutil.Response) {
	return func(t *testing.T, r *testutil.Response) {
		t.Helper()
		if got := r.Header.Get("X-RateLimit-Limit"); got != strconv.Itoa(limit) {
			t.Errorf("X-RateLimit-Limit = %q, want %d", got, limit)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(remaining) {
			t.Errorf("X-RateLimit-Remaining = %q, want %d", got, remaining)
		}
		raw := r.Header.Get("X-RateLimit-Reset")
		reset, err := strconv.ParseInt(raw, 10, 64)
		want := time.Now().Add(resetIn).Unix()
		if err != nil || len(raw) != 10 || reset < want-3 || reset > want+2 {
			t.Errorf("X-RateLimit-Reset = %q, want ten digits near %d", raw, want)
		}
	}
}

// refused checks a 429: the headers of the exhausted window, Retry-After
// (seconds until it resets) and the same figures in error.details.
func refused(name string, limit int, resetIn time.Duration) func(*testing.T, *testutil.Response) {
	return func(t *testing.T, r *testutil.Response) {
		t.Helper()
		window(limit, 0, resetIn)(t, r)
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		want := int(resetIn / time.Second)
		if err != nil || retry < want-3 || retry > want+2 {
			t.Errorf("Retry-After = %q, want about %d", r.Header.Get("Retry-After"), want)
		}
		var env struct {
			Error struct {
				Details struct {
					Window     string `json:"window"`
					Limit      int    `json:"limit"`
					RetryAfter int    `json:"retry_after"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		d := env.Error.Details
		if d.Window != name || d.Limit != limit || d.RetryAfter != retry {
			t.Errorf("details = %+v, want window %s, limit %d, retry_after %d", d, name, limit, retry)
		}
	}
}

// unlimited checks that a response carries no rate-limit headers.
func unlimited(t *testing.T, r *testutil.Response) {
	t.Helper()
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s = %q, want none", h, v)
		}
	}
}

// TestRateLimitWindows drives one key into each window: the headers always
// show the window with the fewest requests left (on a tie the one that
// resets later), and the first exhausted window refuses.
func TestRateLimitWindows(t *testing.T) {
	const minute, hour = time.Minute, time.Hour
	cases := []struct {
		name               string
		perMinute, perHour int
		rows               []func(*testing.T, *testutil.Response) // one per request; the last is refused
		refusedBy          string
	}{
		{"minute binds", 3, 5, []func(*testing.T, *testutil.Response){
			window(3, 2, minute), window(3, 1, minute), window(3, 0, minute), refused("minute", 3, minute),
		}, "minute"},
		{"hour binds", 100, 3, []func(*testing.T, *testutil.Response){
			window(3, 2, hour), window(3, 1, hour), window(3, 0, hour), refused("hour", 3, hour),
		}, "hour"},
		{"tie shows the longer window", 2, 2, []func(*testing.T, *testutil.Response){
			window(2, 1, hour), window(2, 0, hour), refused("minute", 2, minute),
		}, "minute"},
	}
	for store, url := range rateStores(t) {
		for _, tc := range cases {
			t.Run(store+"/"+tc.name, func(t *testing.T) {
				env := limited(t, url, tc.perMinute, tc.perHour, 20)
				var rows []testutil.Scenario
				for i, check := range tc.rows {
					s := testutil.Scenario{
						Name: "request " + strconv.Itoa(i+1), Method: "GET", Path: "/v1/users/me",
						Token: env.Alice.Token, Status: http.StatusOK, Check: check,
					}
					if i == len(tc.rows)-1 {
						s.Status, s.Code = http.StatusTooManyRequests, "RATE_LIMITED"
						s.Contains = []string{`"window":"` + tc.refusedBy + `"`}
					}
					rows = append(rows, s)
				}
				testutil.Run(t, env, rows)
			})
		}
	}
}

// TestRateLimitPerKey shows whose budget a request spends: every token of
// a key shares one, another key (even of the same user) and another user
// have their own, logins and unauthenticated requests spend nothing, and a
// refused request does no work.
func TestRateLimitPerKey(t *testing.T) {
	for store, url := range rateStores(t) {
		t.Run(store, func(t *testing.T) {
			env := limited(t, url, 3, 5, 20)
			// A second token of Alice's key, through the API: the login
			// itself must not spend the key's budget.
			login := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"api_key": env.Alice.Key}})
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			login.Data(t, &tok)
			unlimited(t, login)
			secondKey := env.NewActor("alice@example.com", "Alice", false)

			testutil.Run(t, env, []testutil.Scenario{
				{Name: "first token: login spent nothing", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token,
					Status: http.StatusOK, Check: window(3, 2, time.Minute)},
				{Name: "second token of the same key shares the budget", Method: "GET", Path: "/v1/items", Token: tok.AccessToken,
					Status: http.StatusOK, Check: window(3, 1, time.Minute)},
				{Name: "first token spends the last request", Method: "POST", Path: "/v1/items", Token: env.Alice.Token,
					Body: map[string]any{"name": "counted"}, Status: http.StatusCreated, Check: window(3, 0, time.Minute)},
				{Name: "refused before any work", Method: "POST", Path: "/v1/items", Token: tok.AccessToken,
					Body: map[string]any{"name": "refused"}, Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
					NotContains: []string{"refused\""}, Check: refused("minute", 3, time.Minute)},
				{Name: "another user has their own budget", Method: "GET", Path: "/v1/users/me", Token: env.Bob.Token,
					Status: http.StatusOK, Check: window(3, 2, time.Minute)},
				{Name: "another key of the same user has its own budget", Method: "GET", Path: "/v1/users/me", Token: secondKey.Token,
					Status: http.StatusOK, Check: window(3, 2, time.Minute)},
				{Name: "the refused create left nothing behind", Method: "GET", Path: "/v1/items?user_id=" + env.Alice.UserID, Token: env.Admin.Token,
					Status: http.StatusOK, Contains: []string{`"total":1`, `"name":"counted"`}, NotContains: []string{`"name":"refused"`}},
				{Name: "no token: nothing counted", Method: "GET", Path: "/v1/users/me",
					Status: http.StatusUnauthorized, Code: "UNAUTHORIZED", Check: unlimited},
				{Name: "bad token: nothing counted", Method: "GET", Path: "/v1/users/me", Token: "not.a.token",
					Status: http.StatusUnauthorized, Code: "UNAUTHORIZED", Check: unlimited},
			})
		})
	}
}
