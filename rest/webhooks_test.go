package rest_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// publicDNS resolves the test's receiver names to public addresses and one
// name to a private address; the tests never dial them.
func publicDNS(_ context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case "hooks.example.com", "other.example.com":
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case "intranet.example.com":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func webhookEnv(t *testing.T) *testutil.Env {
	return testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = publicDNS }))
}

// createWebhook registers an endpoint and returns its id.
func createWebhook(t *testing.T, env *testutil.Env, as testutil.Actor, url string) string {
	t.Helper()
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: as.Token, Body: map[string]any{"url": url}})
	if r.Status != 201 {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	var w struct{ ID string }
	r.Data(t, &w)
	return w.ID
}

func TestWebhooksAPI(t *testing.T) {
	env := webhookEnv(t)
	alice := createWebhook(t, env, env.Alice, "https://hooks.example.com/alice")
	bob := createWebhook(t, env, env.Bob, "https://hooks.example.com/bob")
	gone := createWebhook(t, env, env.Alice, "https://hooks.example.com/gone")
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/webhooks/" + gone, Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	const unknown = "whk_01jd0000000000000000000000"
	long := strings.Repeat("d", 501)

	testutil.Run(t, env, []testutil.Scenario{
		// create
		{Name: "create", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body:   map[string]any{"url": "https://hooks.example.com/new", "description": "CRM sync", "events": []string{"item.deleted", "item.created", "item.created"}},
			Status: 201, Contains: []string{`"secret":"whsec_`, `"events":["item.created","item.deleted"]`, `"active":true`, `"description":"CRM sync"`, `"user_id":"` + env.Alice.UserID + `"`},
			Check: func(t *testing.T, r *testutil.Response) {
				var w struct{ ID string }
				r.Data(t, &w)
				if !strings.HasPrefix(w.ID, "whk_") || r.Header.Get("Location") != "/v1/webhooks/"+w.ID {
					t.Errorf("id %q, Location %q", w.ID, r.Header.Get("Location"))
				}
			}},
		{Name: "create, events default to all (empty list)", Method: "POST", Path: "/v1/webhooks", Token: env.Bob.Token,
			Body: map[string]any{"url": "http://other.example.com:8080/x"}, Status: 201, Contains: []string{`"events":[]`}},
		{Name: "create without url", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"description": "x"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`, "is required"}},
		{Name: "url not a string", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": 5}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`}},
		{Name: "url scheme", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "ftp://hooks.example.com/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`, "http or https"}},
		{Name: "url on loopback", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "http://127.0.0.1:8080/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`, "forbidden address"}},
		{Name: "url on IPv6 loopback", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "http://[::1]/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`}},
		{Name: "url on the metadata service", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "http://169.254.169.254/latest"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`}},
		{Name: "url whose name resolves to a private address", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://intranet.example.com/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`, "resolves to a forbidden address"}},
		{Name: "url that does not resolve", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://nowhere.example.com/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`, "could not be resolved"}},
		{Name: "unknown event", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://hooks.example.com/", "events": []string{"item.moved"}}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"events"`}},
		{Name: "events not a list", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://hooks.example.com/", "events": "item.created"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"events"`}},
		{Name: "description too long", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://hooks.example.com/", "description": long}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"description"`}},
		{Name: "active not a boolean", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://hooks.example.com/", "active": "yes"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"active"`}},
		{Name: "the secret cannot be chosen", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: map[string]any{"url": "https://hooks.example.com/", "secret": "whsec_mine"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"secret"`}},
		{Name: "not JSON", Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
			Body: "{", Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "no token", Method: "POST", Path: "/v1/webhooks",
			Body: map[string]any{"url": "https://hooks.example.com/"}, Status: 401, Code: "UNAUTHORIZED"},

		// read
		{Name: "get own, without its secret", Method: "GET", Path: "/v1/webhooks/" + alice, Token: env.Alice.Token,
			Status: 200, Contains: []string{`"id":"` + alice + `"`, `"url":"https://hooks.example.com/alice"`}, NotContains: []string{"whsec_", `"secret"`}},
		{Name: "get another user's", Method: "GET", Path: "/v1/webhooks/" + bob, Token: env.Alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "admin gets anyone's", Method: "GET", Path: "/v1/webhooks/" + bob, Token: env.Admin.Token, Status: 200, Contains: []string{bob}},
		{Name: "get unknown", Method: "GET", Path: "/v1/webhooks/" + unknown, Token: env.Alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "get deleted", Method: "GET", Path: "/v1/webhooks/" + gone, Token: env.Alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "get malformed id", Method: "GET", Path: "/v1/webhooks/item_x", Token: env.Alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "list own only", Method: "GET", Path: "/v1/webhooks", Token: env.Bob.Token, Status: 200,
			Contains: []string{bob}, NotContains: []string{alice, "whsec_"}},
		{Name: "admin lists all", Method: "GET", Path: "/v1/webhooks?limit=100", Token: env.Admin.Token, Status: 200,
			Contains: []string{alice, bob, `"pagination":{`}},
		{Name: "list bad limit", Method: "GET", Path: "/v1/webhooks?limit=0", Token: env.Alice.Token, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"limit"`}},

		// update
		{Name: "partial update", Method: "PUT", Path: "/v1/webhooks/" + alice, Token: env.Alice.Token,
			Body:   map[string]any{"events": []string{"item.updated"}, "active": false, "id": alice, "user_id": env.Alice.UserID, "consecutive_failures": 7},
			Status: 200, Contains: []string{`"events":["item.updated"]`, `"active":false`, `"url":"https://hooks.example.com/alice"`, `"consecutive_failures":0`}, NotContains: []string{"whsec_"}},
		{Name: "update with another id", Method: "PUT", Path: "/v1/webhooks/" + alice, Token: env.Alice.Token,
			Body: map[string]any{"description": "x", "id": "whk_01jd0000000000000000000000"}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"id"`, `"reason":"is read-only`}},
		{Name: "update url to a private address", Method: "PUT", Path: "/v1/webhooks/" + alice, Token: env.Alice.Token,
			Body: map[string]any{"url": "http://10.0.0.1/"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"url"`}},
		{Name: "update another user's", Method: "PUT", Path: "/v1/webhooks/" + bob, Token: env.Alice.Token,
			Body: map[string]any{"active": false}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "update unknown", Method: "PUT", Path: "/v1/webhooks/" + unknown, Token: env.Alice.Token,
			Body: map[string]any{"active": false}, Status: 404, Code: "NOT_FOUND"},

		// rotate
		{Name: "rotate shows the new secret once", Method: "POST", Path: "/v1/webhooks/" + bob + "/rotate-secret", Token: env.Bob.Token,
			Status: 200, Contains: []string{`"secret":"whsec_`, `"previous_secret_expires_at":"`}},
		{Name: "rotate another user's", Method: "POST", Path: "/v1/webhooks/" + bob + "/rotate-secret", Token: env.Alice.Token,
			Status: 403, Code: "PERMISSION_DENIED"},

		// deliveries
		{Name: "deliveries of own", Method: "GET", Path: "/v1/webhooks/" + alice + "/deliveries", Token: env.Alice.Token,
			Status: 200, Contains: []string{`"data":[]`, `"total":0`}},
		{Name: "deliveries of another user's", Method: "GET", Path: "/v1/webhooks/" + bob + "/deliveries", Token: env.Alice.Token,
			Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "deliveries bad state", Method: "GET", Path: "/v1/webhooks/" + alice + "/deliveries?state=lost", Token: env.Alice.Token,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"state"`}},
		{Name: "retry unknown delivery", Method: "POST", Path: "/v1/webhooks/" + bob + "/deliveries/dlv_01jd0000000000000000000000/retry", Token: env.Bob.Token,
			Status: 404, Code: "NOT_FOUND"},
		{Name: "retry on another user's webhook", Method: "POST", Path: "/v1/webhooks/" + bob + "/deliveries/dlv_01jd0000000000000000000000/retry", Token: env.Alice.Token,
			Status: 403, Code: "PERMISSION_DENIED"},

		// delete
		{Name: "delete another user's", Method: "DELETE", Path: "/v1/webhooks/" + bob, Token: env.Alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "delete unknown", Method: "DELETE", Path: "/v1/webhooks/" + unknown, Token: env.Alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "admin deletes anyone's", Method: "DELETE", Path: "/v1/webhooks/" + bob, Token: env.Admin.Token,
			Status: 200, Contains: []string{`"deleted":true`, `"id":"` + bob + `"`}},
		{Name: "wrong method", Method: "PATCH", Path: "/v1/webhooks/" + alice, Token: env.Alice.Token, Body: map[string]any{}, Status: 405, Code: "METHOD_NOT_ALLOWED"},
	})
}

// TestWebhookDeleteTakesItsLog: deleting an endpoint with deliveries and
// attempts removes them too, and the item changes after it go nowhere.
func TestWebhookDeleteTakesItsLog(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }))
	env.App.Start(context.Background())
	id := createWebhook(t, env, env.Alice, "http://127.0.0.1:1/unreachable")
	env.CreateItem(env.Alice, "x")
	var ds []map[string]any
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		r := env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + id + "/deliveries", Token: env.Alice.Token})
		r.Data(t, &ds)
		return len(ds) == 1 && ds[0]["attempts"] == 1.0
	}) {
		t.Fatalf("no attempt logged: %v", ds)
	}
	r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/webhooks/" + id, Token: env.Alice.Token})
	testutil.Scenario{Status: 200, Contains: []string{`"deleted":true`}}.Assert(t, r)
	r = env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + id + "/deliveries", Token: env.Alice.Token})
	testutil.Scenario{Status: 404, Code: "NOT_FOUND"}.Assert(t, r)
}
