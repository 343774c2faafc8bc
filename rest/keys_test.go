package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// keyFixtures are the callers of the keys tests: the admin, Alice (with a
// read-only key and a spare key to revoke), Bob (with a spare key), a user
// whose key has expired and a disabled user.
type keyFixtures struct {
	admin, alice, aliceRO, aliceSpare, bob, bobSpare, expired, gone testutil.Actor
}

// newKeyFixtures starts a server whose key recheck is short, and waits until
// the expired key and the disabled user are refused.
func newKeyFixtures(t *testing.T) (*testutil.Env, keyFixtures) {
	t.Helper()
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = 100 * time.Millisecond }))
	f := keyFixtures{admin: env.Admin, alice: env.Alice, bob: env.Bob}
	f.aliceRO = env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
	f.aliceSpare = env.NewActor("alice@example.com", "Alice", false)
	f.bobSpare = env.NewActor("bob@example.com", "Bob", false)
	f.expired = env.NewKeyActor("carol@example.com", "Carol", false, nil)
	if err := env.App.DB.Client.APIKey.UpdateOneID(f.expired.KeyID).SetExpiresAt(time.Now().Add(-time.Second)).
		Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	f.gone = env.NewKeyActor("dave@example.com", "Dave", false, nil)
	if err := env.App.DB.Client.User.UpdateOneID(f.gone.UserID).SetDisabled(true).Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: f.gone.Token}).Status == 401 &&
			env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: f.expired.Token}).Status == 401
	})
	return env, f
}

// keyCount is how many keys a user has, read past the API.
func keyCount(t *testing.T, env *testutil.Env, userID string) int {
	t.Helper()
	ks, err := env.App.Service.FindKeys(testutil.SystemContext(t), "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range ks {
		if k.UserID == userID {
			n++
		}
	}
	return n
}

// TestKeysAPI: GET, POST, PUT and DELETE of /v1/keys, a row per case of the
// contract (DESIGN §8) for each kind of caller: the owner, another user, an
// admin, a read-only key, an expired key, a disabled user, and bad input
// (which changes nothing). Rows run in order on one database.
func TestKeysAPI(t *testing.T) {
	env, f := newKeyFixtures(t)
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	long := strings.Repeat("x", 101)
	bad := func(name, method, path string, body map[string]any, field string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: method, Path: path, Token: f.admin.Token, Body: body,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"` + field + `"`}}
	}
	var nextCursor string

	testutil.Run(t, env, []testutil.Scenario{
		// GET /v1/keys
		{Name: "list own keys", Method: "GET", Path: "/v1/keys", Token: f.alice.Token, Status: 200,
			Contains:    []string{f.alice.KeyID, f.aliceRO.KeyID, f.aliceSpare.KeyID, `"total":3`, `"scopes":["read"]`, `"rate_limit_per_minute":null`, `"next_cursor":null`},
			NotContains: []string{f.bob.KeyID, `"key":`, "key_hash", f.alice.Key}},
		{Name: "a read-only key lists", Method: "GET", Path: "/v1/keys", Token: f.aliceRO.Token, Status: 200, Contains: []string{`"total":3`}},
		{Name: "a user names themselves", Method: "GET", Path: "/v1/keys?user_id=" + f.alice.UserID, Token: f.alice.Token, Status: 200, Contains: []string{`"total":3`}},
		{Name: "a user names another user", Method: "GET", Path: "/v1/keys?user_id=" + f.bob.UserID, Token: f.alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "admin lists another user's keys", Method: "GET", Path: "/v1/keys?user_id=" + f.bob.UserID, Token: f.admin.Token, Status: 200,
			Contains: []string{f.bob.KeyID, f.bobSpare.KeyID, `"total":2`}, NotContains: []string{f.alice.KeyID}},
		{Name: "admin's own keys by default", Method: "GET", Path: "/v1/keys", Token: f.admin.Token, Status: 200,
			Contains: []string{f.admin.KeyID, `"total":1`}},
		{Name: "admin names an unknown user", Method: "GET", Path: "/v1/keys?user_id=user_01jd8z5k2m4n6p8q0r2s4t6v8w", Token: f.admin.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "a page of two, newest first", Method: "GET", Path: "/v1/keys?limit=2", Token: f.alice.Token, Status: 200,
			Contains: []string{f.aliceSpare.KeyID, f.aliceRO.KeyID, `"page":1`, `"pages":2`}, NotContains: []string{f.alice.KeyID, `"next_cursor":null`},
			Check: func(t *testing.T, r *testutil.Response) {
				meta := r.JSON(t)["meta"].(map[string]any)["pagination"].(map[string]any)
				nextCursor, _ = meta["next_cursor"].(string)
				next := env.Do(testutil.Request{Method: "GET", Path: "/v1/keys?limit=2&cursor=" + nextCursor, Token: f.alice.Token})
				testutil.Scenario{Status: 200, Contains: []string{f.alice.KeyID, `"next_cursor":null`, `"total":3`},
					NotContains: []string{f.aliceSpare.KeyID, `"page":`}}.Assert(t, next)
			}},
		bad("a cursor not issued here", "GET", "/v1/keys?cursor=nope", nil, "cursor"),
		bad("limit 0", "GET", "/v1/keys?limit=0", nil, "limit"),
		{Name: "an expired key", Method: "GET", Path: "/v1/keys", Token: f.expired.Token, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "a disabled user", Method: "GET", Path: "/v1/keys", Token: f.gone.Token, Status: 401, Code: "UNAUTHORIZED"},

		// GET /v1/keys/{id}
		{Name: "get own key", Method: "GET", Path: "/v1/keys/" + f.alice.KeyID, Token: f.alice.Token, Status: 200,
			Contains:    []string{`"id":"` + f.alice.KeyID + `"`, `"user_id":"` + f.alice.UserID + `"`, `"prefix":"sk_`, `"revoked_at":null`},
			NotContains: []string{`"key":`}},
		{Name: "a read-only key reads its user's key", Method: "GET", Path: "/v1/keys/" + f.alice.KeyID, Token: f.aliceRO.Token, Status: 200},
		{Name: "another user's key is not found", Method: "GET", Path: "/v1/keys/" + f.alice.KeyID, Token: f.bob.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "admin reads anyone's key", Method: "GET", Path: "/v1/keys/" + f.alice.KeyID, Token: f.admin.Token, Status: 200},
		{Name: "an unknown id", Method: "GET", Path: "/v1/keys/key_01jd8z6n3v5q1w2e3r4t5y6u7i", Token: f.admin.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "not a key id", Method: "GET", Path: "/v1/keys/item_x", Token: f.admin.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "get with an expired key", Method: "GET", Path: "/v1/keys/" + f.expired.KeyID, Token: f.expired.Token, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "get as a disabled user", Method: "GET", Path: "/v1/keys/" + f.gone.KeyID, Token: f.gone.Token, Status: 401, Code: "UNAUTHORIZED"},

		// POST /v1/keys
		{Name: "create a read-only key that expires", Method: "POST", Path: "/v1/keys", Token: f.alice.Token,
			Body:   map[string]any{"label": " CI ", "scopes": []string{"read"}, "expires_at": future},
			Status: 201, Contains: []string{`"key":"sk_`, `"label":"CI"`, `"scopes":["read"]`, `"user_id":"` + f.alice.UserID + `"`, `"expires_at":"`},
			Check: func(t *testing.T, r *testutil.Response) {
				var k struct{ ID, Key, Prefix string }
				r.Data(t, &k)
				if loc := r.Header.Get("Location"); loc != "/v1/keys/"+k.ID {
					t.Errorf("Location %q", loc)
				}
				if !strings.HasPrefix(k.Key, k.Prefix) {
					t.Errorf("prefix %q is not the key's", k.Prefix)
				}
				login := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": k.Key}})
				if login.Status != 200 {
					t.Fatalf("the new key does not log in: %d %s", login.Status, login.Body)
				}
			}},
		{Name: "create with the defaults", Method: "POST", Path: "/v1/keys", Token: f.alice.Token, Body: map[string]any{},
			Status: 201, Contains: []string{`"label":""`, `"scopes":["read","write"]`, `"expires_at":null`}},
		{Name: "a user names themselves as owner", Method: "POST", Path: "/v1/keys", Token: f.alice.Token,
			Body: map[string]any{"user_id": f.alice.UserID}, Status: 201},
		{Name: "admin creates a key for another user", Method: "POST", Path: "/v1/keys", Token: f.admin.Token,
			Body: map[string]any{"user_id": f.bob.UserID, "scopes": []string{"write", "read", "read"}}, Status: 201,
			Contains: []string{`"user_id":"` + f.bob.UserID + `"`, `"scopes":["read","write"]`}},
		{Name: "admin names an unknown owner", Method: "POST", Path: "/v1/keys", Token: f.admin.Token,
			Body: map[string]any{"user_id": "user_01jd8z5k2m4n6p8q0r2s4t6v8w"}, Status: 404, Code: "NOT_FOUND"},
		{Name: "a user may not create a key for another", Method: "POST", Path: "/v1/keys", Token: f.alice.Token,
			Body: map[string]any{"user_id": f.bob.UserID}, Status: 403, Code: "PERMISSION_DENIED"},
		bad("an unknown scope", "POST", "/v1/keys", map[string]any{"scopes": []string{"admin"}}, "scopes"),
		bad("empty scopes", "POST", "/v1/keys", map[string]any{"scopes": []string{}}, "scopes"),
		bad("null scopes", "POST", "/v1/keys", map[string]any{"scopes": nil}, "scopes"),
		bad("expires_at in the past", "POST", "/v1/keys", map[string]any{"expires_at": past}, "expires_at"),
		bad("expires_at not a timestamp", "POST", "/v1/keys", map[string]any{"expires_at": "tomorrow"}, "expires_at"),
		bad("label too long", "POST", "/v1/keys", map[string]any{"label": long}, "label"),
		bad("label not a string", "POST", "/v1/keys", map[string]any{"label": 7}, "label"),
		bad("an unknown field", "POST", "/v1/keys", map[string]any{"rate_limit_per_minute": 3}, "rate_limit_per_minute"),
		{Name: "a read-only key may not create", Method: "POST", Path: "/v1/keys", Token: f.aliceRO.Token, Body: map[string]any{},
			Status: 403, Code: "PERMISSION_DENIED", Contains: []string{`"reason":"read-only key"`}},
		{Name: "create with an expired key", Method: "POST", Path: "/v1/keys", Token: f.expired.Token, Body: map[string]any{}, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "create as a disabled user", Method: "POST", Path: "/v1/keys", Token: f.gone.Token, Body: map[string]any{}, Status: 401, Code: "UNAUTHORIZED",
			Check: func(t *testing.T, _ *testutil.Response) {
				// Alice made three, the admin one of Bob's; the refusals none.
				if a, b, c, d := keyCount(t, env, f.alice.UserID), keyCount(t, env, f.bob.UserID), keyCount(t, env, f.expired.UserID), keyCount(t, env, f.gone.UserID); a != 6 || b != 3 || c != 1 || d != 1 {
					t.Fatalf("keys of alice, bob, carol, dave: %d %d %d %d, want 6 3 1 1", a, b, c, d)
				}
			}},

		// PUT /v1/keys/{id}
		{Name: "relabel own key, sending back read-only fields", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.alice.Token,
			Body: map[string]any{"label": "laptop", "id": f.alice.KeyID, "user_id": f.alice.UserID, "expires_at": nil, "last_used_at": "2000-01-01T00:00:00Z"}, Status: 200,
			Contains: []string{`"label":"laptop"`, `"id":"` + f.alice.KeyID + `"`}},
		bad("another id on PUT", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"label": "x", "id": "key_01jd8z6n3v5q1w2e3r4t5y6u7i"}, "id"),
		{Name: "a user may not set limits", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.alice.Token,
			Body: map[string]any{"rate_limit_per_minute": 3}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a user may not set limits, even null", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.alice.Token,
			Body: map[string]any{"label": "x", "rate_limit_per_hour": nil}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "another user's key is not found on PUT", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.bob.Token,
			Body: map[string]any{"label": "mallory"}, Status: 404, Code: "NOT_FOUND"},
		{Name: "admin sets a key's limits", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.admin.Token,
			Body: map[string]any{"rate_limit_per_minute": 1000, "rate_limit_per_hour": 20000}, Status: 200,
			Contains: []string{`"rate_limit_per_minute":1000`, `"rate_limit_per_hour":20000`, `"label":"laptop"`}},
		{Name: "admin returns one limit to the default", Method: "PUT", Path: "/v1/keys/" + f.alice.KeyID, Token: f.admin.Token,
			Body: map[string]any{"rate_limit_per_hour": nil}, Status: 200,
			Contains: []string{`"rate_limit_per_minute":1000`, `"rate_limit_per_hour":null`}},
		bad("limit 0", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_minute": 0}, "rate_limit_per_minute"),
		bad("a negative limit", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_hour": -5}, "rate_limit_per_hour"),
		bad("a huge limit", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_minute": 1_000_001}, "rate_limit_per_minute"),
		bad("a limit past any int", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_minute": 1e30}, "rate_limit_per_minute"),
		bad("a fractional limit", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_minute": 2.5}, "rate_limit_per_minute"),
		bad("a limit as a string", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"rate_limit_per_minute": "3"}, "rate_limit_per_minute"),
		bad("a label too long", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"label": long}, "label"),
		bad("scopes cannot change", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"scopes": []string{"read"}}, "scopes"),
		bad("expires_at cannot change", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"expires_at": future}, "expires_at"),
		bad("an unknown field on PUT", "PUT", "/v1/keys/"+f.alice.KeyID, map[string]any{"key": "sk_x"}, "key"),
		{Name: "an unknown key on PUT", Method: "PUT", Path: "/v1/keys/key_01jd8z6n3v5q1w2e3r4t5y6u7i", Token: f.admin.Token,
			Body: map[string]any{"label": "x"}, Status: 404, Code: "NOT_FOUND"},
		{Name: "a read-only key may not change a key", Method: "PUT", Path: "/v1/keys/" + f.aliceRO.KeyID, Token: f.aliceRO.Token,
			Body: map[string]any{"label": "x"}, Status: 403, Code: "PERMISSION_DENIED", Contains: []string{`"reason":"read-only key"`}},
		{Name: "PUT with an expired key", Method: "PUT", Path: "/v1/keys/" + f.expired.KeyID, Token: f.expired.Token,
			Body: map[string]any{"label": "x"}, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "PUT as a disabled user", Method: "PUT", Path: "/v1/keys/" + f.gone.KeyID, Token: f.gone.Token,
			Body: map[string]any{"label": "x"}, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "the refused changes changed nothing", Method: "GET", Path: "/v1/keys/" + f.alice.KeyID, Token: f.alice.Token, Status: 200,
			Contains: []string{`"label":"laptop"`, `"rate_limit_per_minute":1000`, `"rate_limit_per_hour":null`, `"scopes":["read","write"]`, `"expires_at":null`}},

		// DELETE /v1/keys/{id}
		{Name: "another user's key is not found on DELETE", Method: "DELETE", Path: "/v1/keys/" + f.aliceSpare.KeyID, Token: f.bob.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "a read-only key may not revoke", Method: "DELETE", Path: "/v1/keys/" + f.aliceSpare.KeyID, Token: f.aliceRO.Token,
			Status: 403, Code: "PERMISSION_DENIED", Contains: []string{`"reason":"read-only key"`}},
		{Name: "revoke with an expired key", Method: "DELETE", Path: "/v1/keys/" + f.expired.KeyID, Token: f.expired.Token, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "revoke as a disabled user", Method: "DELETE", Path: "/v1/keys/" + f.gone.KeyID, Token: f.gone.Token, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "the spare key still works", Method: "GET", Path: "/v1/users/me", Token: f.aliceSpare.Token, Status: 200},
		{Name: "revoke own key", Method: "DELETE", Path: "/v1/keys/" + f.aliceSpare.KeyID, Token: f.alice.Token, Status: 200,
			Contains: []string{`"data":{"id":"` + f.aliceSpare.KeyID + `","revoked":true}`}},
		{Name: "its token stops at once", Method: "GET", Path: "/v1/users/me", Token: f.aliceSpare.Token, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "its key logs in no more", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": f.aliceSpare.Key}, Status: 401, Code: "INVALID_API_KEY"},
		{Name: "revoking again answers the same", Method: "DELETE", Path: "/v1/keys/" + f.aliceSpare.KeyID, Token: f.alice.Token, Status: 200,
			Contains: []string{`"revoked":true`}},
		{Name: "the revoked key is listed with revoked_at", Method: "GET", Path: "/v1/keys/" + f.aliceSpare.KeyID, Token: f.alice.Token, Status: 200,
			NotContains: []string{`"revoked_at":null`}},
		{Name: "admin revokes another user's key", Method: "DELETE", Path: "/v1/keys/" + f.bobSpare.KeyID, Token: f.admin.Token, Status: 200},
		{Name: "that token stops too", Method: "GET", Path: "/v1/users/me", Token: f.bobSpare.Token, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "Bob's other key works", Method: "GET", Path: "/v1/users/me", Token: f.bob.Token, Status: 200},
		{Name: "an unknown key on DELETE", Method: "DELETE", Path: "/v1/keys/key_01jd8z6n3v5q1w2e3r4t5y6u7i", Token: f.admin.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "a user revokes the key they use", Method: "DELETE", Path: "/v1/keys/" + f.bob.KeyID, Token: f.bob.Token, Status: 200},
		{Name: "and is logged out", Method: "GET", Path: "/v1/keys", Token: f.bob.Token, Status: http.StatusUnauthorized, Code: "UNAUTHORIZED"},
	})
}
