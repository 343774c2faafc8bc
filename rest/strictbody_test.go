package rest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestStrictBodies: a name repeated in a body, at any depth, is 400
// VALIDATION_ERROR naming it, on every REST body (encoding/json would keep
// the last one: a read-only key's body that makes a write key); a read-only
// field sent on PUT is accepted with the resource's value and refused naming
// it with another, on every PUT.
func TestStrictBodies(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }))
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer receiver.Close()
	alice, admin := env.Alice, env.Admin
	item := env.CreateItem(alice, "strict")
	var hook struct{ ID string }
	env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: alice.Token, Body: map[string]any{"url": receiver.URL}}).Data(t, &hook)
	keys := func() int {
		n, err := env.App.DB.Client.APIKey.Query().Count(testutil.SystemContext(t))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := keys()
	dup := func(name, method, path, token, body, field string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: method, Path: path, Token: token, Body: body, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"` + field + `"`, `appears more than once`}}
	}
	readOnly := func(name, path, token string, body map[string]any, field string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "PUT", Path: path, Token: token, Body: body, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"` + field + `"`, `"reason":"is read-only`}}
	}

	testutil.Run(t, env, []testutil.Scenario{
		dup("a key's scopes twice", "POST", "/v1/keys", alice.Token, `{"scopes":["read"],"scopes":["read","write"]}`, "scopes"),
		dup("an item's name twice", "POST", "/v1/items", alice.Token, `{"name":"a","description":"d","name":"b"}`, "name"),
		dup("a name twice, once escaped", "PUT", "/v1/items/"+item, alice.Token, `{"n\u0061me":"a", "status":"archived", "name":"b"}`, "name"),
		dup("in a nested object", "POST", "/v1/items", alice.Token, `{"name":"a","extra":[{"k":1},{"k":1,"k":2}]}`, "extra.k"),
		dup("a webhook's url twice", "POST", "/v1/webhooks", alice.Token, `{"url":"`+receiver.URL+`","url":"https://hooks.example.com/x"}`, "url"),
		dup("a webhook's events twice", "PUT", "/v1/webhooks/"+hook.ID, alice.Token, `{"events":[],"events":["item.created"]}`, "events"),
		dup("a user's role twice", "PUT", "/v1/users/"+alice.UserID, admin.Token, `{"role":"user","role":"admin"}`, "role"),
		dup("a new user's email twice", "POST", "/v1/users", admin.Token, `{"email":"x@example.com","name":"X","email":"y@example.com"}`, "email"),
		dup("a key's label twice", "PUT", "/v1/keys/"+alice.KeyID, alice.Token, `{"label":"a","label":"b"}`, "label"),
		dup("recover's since twice", "POST", "/v1/webhooks/"+hook.ID+"/recover", alice.Token, `{"since":"2026-01-01T00:00:00Z","since":"2026-01-02T00:00:00Z"}`, "since"),
		dup("login's api_key twice", "POST", "/v1/auth/login", "", `{"api_key":"`+alice.Key+`","api_key":"`+alice.Key+`"}`, "api_key"),
		{Name: "no key was made", Method: "GET", Path: "/v1/users/me", Token: alice.Token, Status: 200,
			Check: func(t *testing.T, _ *testutil.Response) {
				if n := keys(); n != before {
					t.Fatalf("%d keys, want %d", n, before)
				}
			}},
		{Name: "equal names in different objects", Method: "POST", Path: "/v1/keys", Token: alice.Token,
			Body: `{"label":"one","scopes":["read","read"]}`, Status: 201},

		readOnly("a user's email", "/v1/users/"+alice.UserID, admin.Token, map[string]any{"email": "new@example.com"}, "email"),
		readOnly("a user's own email", "/v1/users/"+alice.UserID, alice.Token, map[string]any{"name": "A", "email": "new@example.com"}, "email"),
		readOnly("a user's id", "/v1/users/"+alice.UserID, admin.Token, map[string]any{"id": env.Bob.UserID}, "id"),
		readOnly("an item's owner", "/v1/items/"+item, alice.Token, map[string]any{"user_id": env.Bob.UserID}, "user_id"),
		readOnly("an item's creation", "/v1/items/"+item, alice.Token, map[string]any{"created_at": "2000-01-01T00:00:00Z"}, "created_at"),
		readOnly("a key's scopes", "/v1/keys/"+alice.KeyID, alice.Token, map[string]any{"scopes": []string{"read"}}, "scopes"),
		readOnly("a key's prefix", "/v1/keys/"+alice.KeyID, alice.Token, map[string]any{"prefix": "sk_live_x"}, "prefix"),
		readOnly("a webhook's owner", "/v1/webhooks/"+hook.ID, alice.Token, map[string]any{"user_id": env.Bob.UserID}, "user_id"),
		{Name: "the user kept their email", Method: "GET", Path: "/v1/users/" + alice.UserID, Token: admin.Token, Status: 200,
			Contains: []string{`"email":"alice@example.com"`, `"name":"Alice"`}},
		{Name: "the same email is accepted", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"name": "Alice A.", "email": "alice@example.com"}, Status: 200, Contains: []string{`"name":"Alice A."`}},
		{Name: "a key's own scopes are accepted", Method: "PUT", Path: "/v1/keys/" + alice.KeyID, Token: alice.Token,
			Body: map[string]any{"label": "same", "scopes": []string{"read", "write"}, "expires_at": nil}, Status: 200, Contains: []string{`"label":"same"`}},
		{Name: "another user's item is still forbidden, read-only fields or not", Method: "PUT", Path: "/v1/items/" + item, Token: env.Bob.Token,
			Body: map[string]any{"id": item, "name": "x"}, Status: 403, Code: "PERMISSION_DENIED"},
	})
}
