package rest_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// badKey looks like a key but opens nothing.
const badKey = "sk_live_0000000000000000000000000000000000000000"

// loginAs is a login row from a client behind X-Forwarded-For (empty: the
// connection's own address, 192.0.2.1 in testutil).
func loginAs(name, key, forwardedFor string, status int, code string) testutil.Scenario {
	s := testutil.Scenario{
		Name: name, Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"api_key": key},
		Status: status, Code: code,
	}
	if forwardedFor != "" {
		s.Headers = map[string]string{"X-Forwarded-For": forwardedFor}
	}
	if status == http.StatusTooManyRequests {
		s.Check = refused("minute", 2, time.Minute)
	}
	return s
}

// TestLoginGuard limits failed logins per client address (2 per minute
// here): only INVALID_API_KEY answers count, an exhausted address is
// refused even a good key, and X-Forwarded-For names the client only when
// it comes from a trusted proxy.
func TestLoginGuard(t *testing.T) {
	const ok, bad, tooMany = http.StatusOK, http.StatusUnauthorized, http.StatusTooManyRequests
	for store, url := range rateStores(t) {
		t.Run(store+"/no trusted proxy", func(t *testing.T) {
			env := limited(t, url, 100, 1000, 2)
			good := env.Alice.Key
			testutil.Run(t, env, []testutil.Scenario{
				loginAs("success 1 is not counted", good, "", ok, ""),
				loginAs("success 2 is not counted", good, "", ok, ""),
				loginAs("success 3 is not counted", good, "", ok, ""),
				{Name: "a malformed login is not counted", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{},
					Status: http.StatusBadRequest, Code: "VALIDATION_ERROR"},
				loginAs("failure 1", badKey, "", bad, "INVALID_API_KEY"),
				loginAs("failure 2, claiming another address", badKey, "203.0.113.9", bad, "INVALID_API_KEY"),
				loginAs("refused: the claimed address is not believed", badKey, "203.0.113.10", tooMany, "RATE_LIMITED"),
				loginAs("a good key is refused too from this address", good, "", tooMany, "RATE_LIMITED"),
				{Name: "the key's requests are not affected", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token,
					Status: ok, Check: window(100, 99, time.Minute)},
			})
		})
		t.Run(store+"/behind a trusted proxy", func(t *testing.T) {
			env := limited(t, url, 100, 1000, 2, testutil.WithConfig(func(c *config.Config) {
				c.TrustedProxies = []string{"192.0.2.0/24"}
			}))
			good := env.Alice.Key
			testutil.Run(t, env, []testutil.Scenario{
				loginAs("client A failure 1", badKey, "203.0.113.9", bad, "INVALID_API_KEY"),
				loginAs("client A failure 2", badKey, "203.0.113.9", bad, "INVALID_API_KEY"),
				loginAs("client A refused", badKey, "203.0.113.9", tooMany, "RATE_LIMITED"),
				loginAs("client A refused with a spoofed hop before it", good, "198.51.100.1, 203.0.113.9", tooMany, "RATE_LIMITED"),
				loginAs("client B logs in", good, "203.0.113.10", ok, ""),
				loginAs("client B has its own failures", badKey, "203.0.113.10", bad, "INVALID_API_KEY"),
				loginAs("the proxy itself has its own failures", badKey, "", bad, "INVALID_API_KEY"),
			})
		})
	}
}

// TestRateLimitMountedRoutes shows that routes mounted beside /v1 (where
// /graphql goes) get the rate limit in their authenticated chain, so a key
// spends one budget across both APIs.
func TestRateLimitMountedRoutes(t *testing.T) {
	env := testutil.New(t)
	limits, err := ratelimit.Open(context.Background(), ratelimit.Config{PerMinute: 3, PerHour: 10, LoginFailuresPerMinute: 5})
	if err != nil {
		t.Fatal(err)
	}
	h := rest.NewRouter(env.App.Service, rest.Options{
		Logger:    slog.New(slog.DiscardHandler),
		RateLimit: rest.RateLimit(limits.Keys),
		Mount: func(e *gin.Engine, authenticated ...gin.HandlerFunc) {
			e.POST("/graphql", append(authenticated, func(c *gin.Context) {
				c.Data(http.StatusOK, "application/json", []byte(`{"data":{}}`))
			})...)
		},
	})
	steps := []struct {
		path      string
		status    int
		remaining string
	}{
		{"/v1/users/me", http.StatusOK, "2"},
		{"/graphql", http.StatusOK, "1"},
		{"/v1/users/me", http.StatusOK, "0"},
		{"/graphql", http.StatusTooManyRequests, "0"},
	}
	for _, s := range steps {
		method := "GET"
		if s.path == "/graphql" {
			method = "POST"
		}
		req := httptest.NewRequest(method, s.path, nil)
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != s.status || rec.Header().Get("X-RateLimit-Remaining") != s.remaining {
			t.Fatalf("%s %s: status %d, remaining %q; want %d, %s\n%s", method, s.path, rec.Code,
				rec.Header().Get("X-RateLimit-Remaining"), s.status, s.remaining, rec.Body)
		}
	}
}

// TestLoginGuardAcrossTransports: failed logins through GraphQL and REST
// spend one budget per address, and both are refused once it is used up.
func TestLoginGuardAcrossTransports(t *testing.T) {
	env := limited(t, "", 100, 1000, 2)
	gqlLogin := func(key string) map[string]any {
		return map[string]any{"query": `mutation($k: String!) { login(apiKey: $k) { accessToken } }`, "variables": map[string]any{"k": key}}
	}
	gqlCode := func(key, code string) {
		t.Helper()
		r := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Body: gqlLogin(key)})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"code":"`+code+`"`) {
			t.Fatalf("GraphQL login: %d %s, want code %s", r.Status, r.Body, code)
		}
	}
	gqlCode(badKey, "INVALID_API_KEY")
	testutil.Run(t, env, []testutil.Scenario{
		loginAs("REST failure spends the same budget", badKey, "", http.StatusUnauthorized, "INVALID_API_KEY"),
		loginAs("REST refused", env.Alice.Key, "", http.StatusTooManyRequests, "RATE_LIMITED"),
	})
	gqlCode(env.Alice.Key, "RATE_LIMITED")
}
