package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

func TestLogin(t *testing.T) {
	env := testutil.New(t)
	revoked := env.NewActor("carol@example.com", "Carol", false)
	if _, err := env.App.Service.RevokeKey(context.Background(), revoked.KeyID); err != nil {
		t.Fatal(err)
	}
	unknown := auth.NewKey(auth.LivePrefix)

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "ok", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Alice.Key}, Status: 200,
			Contains: []string{`"token_type":"Bearer"`, `"expires_in":3600`, `"access_token":"ey`}, NotContains: []string{env.Alice.Key}},
		{Name: "wrong key", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": "sk_live_wrong"},
			Status: 401, Code: "INVALID_API_KEY"},
		{Name: "unknown key of the right shape", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": unknown},
			Status: 401, Code: "INVALID_API_KEY", NotContains: []string{unknown}},
		{Name: "revoked key", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": revoked.Key},
			Status: 401, Code: "INVALID_API_KEY"},
		{Name: "missing api_key", Method: "POST", Path: "/v1/auth/login", Body: `{}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"api_key"`}},
		{Name: "empty api_key", Method: "POST", Path: "/v1/auth/login", Body: `{"api_key":""}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"api_key"`}},
		{Name: "api_key not a string", Method: "POST", Path: "/v1/auth/login", Body: `{"api_key":123}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"api_key"`}},
		{Name: "unknown field", Method: "POST", Path: "/v1/auth/login", Body: `{"api_key":"x","password":"y"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"password"`}},
		{Name: "malformed JSON", Method: "POST", Path: "/v1/auth/login", Body: `{"api_key"`,
			Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "not JSON", Method: "POST", Path: "/v1/auth/login", Body: `api_key=x`,
			Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "token works", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token, Status: 200,
			Contains: []string{`"id":"` + env.Alice.UserID + `"`, `"role":"user"`}},
	})
}

// TestTokenExpiry: a correctly signed token past its expiry is TOKEN_EXPIRED;
// an expired token with a bad signature learns only UNAUTHORIZED.
func TestTokenExpiry(t *testing.T) {
	env := testutil.New(t)
	secret := env.App.SigningKey
	past := auth.NewTokens(secret, time.Minute).WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) })
	expired, err := past.Issue(env.Alice.UserID, env.Alice.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := auth.NewTokens([]byte(strings.Repeat("x", 32)), time.Minute).
		WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) }).
		Issue(env.Alice.UserID, env.Alice.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "expired", Method: "GET", Path: "/v1/items", Token: expired, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "expired and forged", Method: "GET", Path: "/v1/items", Token: forged, Status: 401, Code: "UNAUTHORIZED"},
	})
}

// TestShortTTL: TOKEN_TTL sets expires_in.
func TestShortTTL(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.TokenTTL = 90 * time.Second }))
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Alice.Key}})
	testutil.Scenario{Status: 200, Contains: []string{`"expires_in":90`}}.Assert(t, r)
}

// TestRevokedKeyToken: a revoked key's tokens stop working at once on the
// process that revoked it, and within the recheck interval on another
// replica of the same database.
func TestRevokedKeyToken(t *testing.T) {
	env := testutil.New(t)
	ctx := context.Background()

	// A second replica on the same database, with its own key cache.
	replica, err := app.New(ctx, env.App.Config, env.App.Logger, app.Options{
		Service: service.Options{KeyRecheck: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replica.Close() })
	other := &testutil.Env{T: t, App: replica}

	me := testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token}
	for _, e := range []*testutil.Env{env, other} {
		testutil.Scenario{Status: 200}.Assert(t, e.Do(me))
	}
	if _, err := env.App.Service.RevokeKey(ctx, env.Alice.Key); err != nil {
		t.Fatal(err)
	}
	testutil.Scenario{Status: 401, Code: "UNAUTHORIZED"}.Assert(t, env.Do(me))
	if !testutil.Eventually(t, 10*time.Second, func() bool { return other.Do(me).Status == 401 }) {
		t.Fatal("the replica kept accepting the revoked key's token")
	}
	// Other keys are unaffected.
	testutil.Scenario{Status: 200}.Assert(t, env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Bob.Token}))
}
