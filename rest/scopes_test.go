package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestReadOnlyKeyWritesNothing: a key with only the read scope reads, and
// every write route of the router (read from it, not listed here) answers
// 403 PERMISSION_DENIED with details.reason "read-only key" and changes
// nothing, its own resources included.
func TestReadOnlyKeyWritesNothing(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }))
	ro := env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
	item := env.CreateItem(env.Alice, "kept")
	res := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
		Body: map[string]any{"url": "http://127.0.0.1:9/hook"}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", res.Status, res.Body)
	}
	var hook struct{ ID string }
	res.Data(t, &hook)
	ids := map[string]string{"/v1/items/": item, "/v1/webhooks/": hook.ID, "/v1/users/": ro.UserID, "/v1/events/": "evt_x"}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "reads its items", Method: "GET", Path: "/v1/items", Token: ro.Token, Status: 200, Contains: []string{item}},
		{Name: "reads an item", Method: "GET", Path: "/v1/items/" + item, Token: ro.Token, Status: 200},
		{Name: "reads its webhooks", Method: "GET", Path: "/v1/webhooks", Token: ro.Token, Status: 200, Contains: []string{hook.ID}},
	})

	writes := 0
	for _, r := range env.App.Handler.(*gin.Engine).Routes() {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions ||
			!strings.HasPrefix(r.Path, "/v1/") || r.Path == "/v1/auth/login" {
			continue
		}
		writes++
		path := r.Path
		for prefix, id := range ids {
			if strings.HasPrefix(path, prefix+":id") {
				path = prefix + id + strings.TrimPrefix(path, prefix+":id")
			}
		}
		path = strings.ReplaceAll(path, ":delivery_id", "dlv_x")
		body := map[string]any{"name": "changed", "url": "http://127.0.0.1:9/other", "active": false}
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			testutil.Scenario{Status: http.StatusForbidden, Code: "PERMISSION_DENIED", Contains: []string{`"reason":"read-only key"`}}.
				Assert(t, env.Do(testutil.Request{Method: r.Method, Path: path, Token: ro.Token, Body: body}))
		})
	}
	if writes < 8 {
		t.Fatalf("found %d write routes under /v1; the router has more", writes)
	}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "the item is unchanged", Method: "GET", Path: "/v1/items/" + item, Token: env.Alice.Token, Status: 200,
			Contains: []string{`"name":"kept"`}},
		{Name: "no item was added", Method: "GET", Path: "/v1/items", Token: env.Alice.Token, Status: 200,
			Contains: []string{`"total":1`}},
		{Name: "the webhook is unchanged", Method: "GET", Path: "/v1/webhooks/" + hook.ID, Token: env.Alice.Token, Status: 200,
			Contains: []string{`"active":true`, `"url":"http://127.0.0.1:9/hook"`}},
		{Name: "no webhook was added", Method: "GET", Path: "/v1/webhooks", Token: env.Alice.Token, Status: 200,
			Contains: []string{`"total":1`}},
	})
}

// TestKeyExpiryAndDisabledUsers: an expired key and a disabled user's key
// log in no more (INVALID_API_KEY, as a wrong key); a token never outlives
// its key; a disabled user's tokens, and an expired key's, stop within the
// key recheck, while the user's items stay.
func TestKeyExpiryAndDisabledUsers(t *testing.T) {
	const recheck = 200 * time.Millisecond
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = recheck }))
	soon := time.Now().Add(30 * time.Minute)
	expiring := env.NewKeyActor("carol@example.com", "Carol", false, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
		return u.SetExpiresAt(soon)
	})
	gone := env.NewKeyActor("dave@example.com", "Dave", false, nil)
	item := env.CreateItem(gone, "stays")
	system := testutil.SystemContext(t)
	if err := env.App.DB.Client.APIKey.UpdateOneID(gone.KeyID).SetExpiresAt(time.Now().Add(-time.Second)).Exec(system); err != nil {
		t.Fatal(err)
	}
	disabled := env.NewKeyActor("erin@example.com", "Erin", false, nil)
	env.CreateItem(disabled, "also stays")
	if err := env.App.DB.Client.User.UpdateOneID(disabled.UserID).SetDisabled(true).Exec(system); err != nil {
		t.Fatal(err)
	}

	login := func(key string) testutil.Request {
		return testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": key}}
	}
	res := env.Do(login(expiring.Key))
	var tok struct {
		ExpiresIn int `json:"expires_in"`
	}
	res.Data(t, &tok)
	if res.Status != 200 || tok.ExpiresIn > 1800 || tok.ExpiresIn < 1700 {
		t.Fatalf("login of a key expiring in 30m: %d expires_in %d; want 200 and at most 1800", res.Status, tok.ExpiresIn)
	}

	for _, s := range []struct {
		name  string
		token string
		code  string
	}{
		{"expired key's token", gone.Token, "TOKEN_EXPIRED"},
		{"disabled user's token", disabled.Token, "UNAUTHORIZED"},
	} {
		t.Run(s.name, func(t *testing.T) {
			if !testutil.Eventually(t, 5*time.Second, func() bool {
				return env.Do(testutil.Request{Method: "GET", Path: "/v1/items", Token: s.token}).ErrorCode() == s.code
			}) {
				t.Fatalf("the token still works; want %s within the key recheck", s.code)
			}
		})
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "expired key logs in", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": gone.Key},
			Status: 401, Code: "INVALID_API_KEY"},
		{Name: "disabled user's key logs in", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": disabled.Key},
			Status: 401, Code: "INVALID_API_KEY"},
		{Name: "an enabled user's key still logs in", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Alice.Key},
			Status: 200},
		{Name: "the expired key's items stay", Method: "GET", Path: "/v1/items/" + item, Token: env.Admin.Token,
			Status: 200, Contains: []string{`"name":"stays"`}},
		{Name: "the disabled user's items stay", Method: "GET", Path: "/v1/items?user_id=" + disabled.UserID, Token: env.Admin.Token,
			Status: 200, Contains: []string{`"name":"also stays"`}},
	})
}
