package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestWebhookContractSweep sends one request for each webhook operation and
// each status the OpenAPI document promises for it, with deliveries in every
// shape the log shows (succeeded, failed on an HTTP status, failed without an
// answer), so that testutil's check proves the document's webhook part the
// way TestContractSweep proves the rest.
func TestWebhookContractSweep(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.WebhookAllowPrivate = true // the receivers listen on loopback
		c.WebhookRetrySchedule = []time.Duration{10 * time.Millisecond}
		// The waits for deliveries poll as Alice, as often as a busy
		// machine needs; her budget is not what is tested here.
		c.RateLimitPerMinute, c.RateLimitPerHour = 1<<30, 1<<30
	}), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.PollInterval = 10 * time.Millisecond
		o.Webhooks.Jitter = func(d time.Duration) time.Duration { return d }
		o.Webhooks.DrainTimeout = 100 * time.Millisecond
	}))
	answer := func(status int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(s.Close)
		return s.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connection refused: an attempt without a status

	failing := createWebhook(t, env, env.Alice, answer(503))
	ok := createWebhook(t, env, env.Alice, answer(204))
	silent := createWebhook(t, env, env.Alice, closed.URL)
	bobs := createWebhook(t, env, env.Bob, answer(204))
	gone := createWebhook(t, env, env.Alice, answer(204))
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/webhooks/" + gone, Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	env.App.Start(t.Context())
	env.CreateItem(env.Alice, "watched")

	// delivery waits for the one delivery of an endpoint to reach a state
	// and returns its id.
	delivery := func(webhook, state string) string {
		t.Helper()
		var ds []struct{ ID string }
		if !testutil.Eventually(t, 10*time.Second, func() bool {
			r := env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + webhook + "/deliveries?state=" + state, Token: env.Alice.Token})
			r.Data(t, &ds)
			return len(ds) == 1
		}) {
			t.Fatalf("the delivery to %s never became %s", webhook, state)
		}
		return ds[0].ID
	}
	failed := delivery(failing, "failed")
	delivery(ok, "succeeded")
	unanswered := delivery(silent, "failed")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + silent, Token: env.Alice.Token, Body: map[string]any{"active": false}}); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + ok + "/rotate-secret", Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	// What a client got, to send back: read-only fields included.
	var got map[string]any
	env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + ok, Token: env.Alice.Token}).Data(t, &got)

	alice, bob := env.Alice.Token, env.Bob.Token
	const unknown = "whk_01jd0000000000000000000000"
	big := `{"url":"` + strings.Repeat("x", 1<<20) + `"}`
	text := map[string]string{"Content-Type": "text/plain"}
	location := func(t *testing.T, r *testutil.Response) {
		if !strings.HasPrefix(r.Header.Get("Location"), "/v1/webhooks/whk_") {
			t.Errorf("Location = %q", r.Header.Get("Location"))
		}
	}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "list", Method: "GET", Path: "/v1/webhooks?page=1&limit=2", Token: alice, Status: 200,
			Contains: []string{`"pagination":{"page":1,"limit":2,"total":3,"pages":2}`}, NotContains: []string{"whsec_"}},
		{Name: "list past the end", Method: "GET", Path: "/v1/webhooks?page=9", Token: alice, Status: 200, Contains: []string{`"data":[]`}},
		{Name: "list bad page", Method: "GET", Path: "/v1/webhooks?page=0", Token: alice, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"page"`}},
		{Name: "list without token", Method: "GET", Path: "/v1/webhooks", Status: 401, Code: "UNAUTHORIZED"},

		{Name: "create", Method: "POST", Path: "/v1/webhooks", Token: alice, Status: 201, Check: location,
			Body:     map[string]any{"url": answer(204), "description": "d", "events": []string{"item.deleted", "item.created", "item.deleted"}, "active": false},
			Contains: []string{`"secret":"whsec_`, `"events":["item.created","item.deleted"]`, `"previous_secret_expires_at":null`}},
		{Name: "create unknown field", Method: "POST", Path: "/v1/webhooks", Token: alice, Body: map[string]any{"url": answer(204), "secret": "whsec_x"}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "create null url", Method: "POST", Path: "/v1/webhooks", Token: alice, Body: map[string]any{"url": nil}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "create not JSON", Method: "POST", Path: "/v1/webhooks", Token: alice, Body: "url=x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "create too big", Method: "POST", Path: "/v1/webhooks", Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},
		{Name: "create without token", Method: "POST", Path: "/v1/webhooks", Body: map[string]any{"url": answer(204)}, Status: 401, Code: "UNAUTHORIZED"},

		{Name: "get rotated", Method: "GET", Path: "/v1/webhooks/" + ok, Token: alice, Status: 200,
			Contains: []string{`"previous_secret_expires_at":"`}, NotContains: []string{"whsec_"}},
		{Name: "get another user's", Method: "GET", Path: "/v1/webhooks/" + bobs, Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "get deleted", Method: "GET", Path: "/v1/webhooks/" + gone, Token: alice, Status: 404, Code: "NOT_FOUND"},
		{Name: "get with a bad token", Method: "GET", Path: "/v1/webhooks/" + ok, Token: alice + "x", Status: 401, Code: "UNAUTHORIZED"},

		{Name: "update with what GET gave", Method: "PUT", Path: "/v1/webhooks/" + ok, Token: alice, Body: got, Status: 200, NotContains: []string{"whsec_"}},
		{Name: "update unknown field", Method: "PUT", Path: "/v1/webhooks/" + ok, Token: alice, Body: map[string]any{"secret": "whsec_x"}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "update another user's", Method: "PUT", Path: "/v1/webhooks/" + bobs, Token: alice, Body: map[string]any{"active": true}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "update unknown", Method: "PUT", Path: "/v1/webhooks/" + unknown, Token: alice, Body: map[string]any{"active": true}, Status: 404, Code: "NOT_FOUND"},
		{Name: "update not JSON", Method: "PUT", Path: "/v1/webhooks/" + ok, Token: alice, Body: "x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "update too big", Method: "PUT", Path: "/v1/webhooks/" + ok, Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		{Name: "rotate", Method: "POST", Path: "/v1/webhooks/" + failing + "/rotate-secret", Token: alice, Status: 200, Contains: []string{`"secret":"whsec_`}},
		{Name: "rotate another user's", Method: "POST", Path: "/v1/webhooks/" + bobs + "/rotate-secret", Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "rotate unknown", Method: "POST", Path: "/v1/webhooks/" + unknown + "/rotate-secret", Token: alice, Status: 404, Code: "NOT_FOUND"},
		{Name: "rotate with a text body", Method: "POST", Path: "/v1/webhooks/" + failing + "/rotate-secret", Token: alice, Body: "x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "rotate with a huge body", Method: "POST", Path: "/v1/webhooks/" + failing + "/rotate-secret", Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		{Name: "deliveries, failed with a status", Method: "GET", Path: "/v1/webhooks/" + failing + "/deliveries", Token: alice, Status: 200,
			Contains: []string{`"state":"failed"`, `"attempts":2`, `"last_status_code":503`, `"next_attempt_at":null`, `"status_code":503`}},
		{Name: "deliveries, failed without an answer", Method: "GET", Path: "/v1/webhooks/" + silent + "/deliveries?page=1&limit=1&state=failed", Token: alice, Status: 200,
			Contains: []string{`"last_status_code":null`, `"status_code":null`}},
		{Name: "deliveries, succeeded", Method: "GET", Path: "/v1/webhooks/" + ok + "/deliveries?state=succeeded", Token: alice, Status: 200,
			Contains: []string{`"state":"succeeded"`, `"last_status_code":204`, `"event":"item.created"`}},
		{Name: "deliveries bad limit", Method: "GET", Path: "/v1/webhooks/" + ok + "/deliveries?limit=101", Token: alice, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"limit"`}},
		{Name: "deliveries of another user's", Method: "GET", Path: "/v1/webhooks/" + bobs + "/deliveries", Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "deliveries of a deleted webhook", Method: "GET", Path: "/v1/webhooks/" + gone + "/deliveries", Token: alice, Status: 404, Code: "NOT_FOUND"},

		{Name: "retry", Method: "POST", Path: "/v1/webhooks/" + failing + "/deliveries/" + failed + "/retry", Token: alice, Status: 200,
			Contains: []string{`"state":"pending"`, `"id":"` + failed + `"`}},
		{Name: "retry on a disabled webhook", Method: "POST", Path: "/v1/webhooks/" + silent + "/deliveries/" + unanswered + "/retry", Token: alice, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"active"`}},
		{Name: "retry another webhook's delivery", Method: "POST", Path: "/v1/webhooks/" + ok + "/deliveries/" + failed + "/retry", Token: alice, Status: 404, Code: "NOT_FOUND"},
		{Name: "retry on another user's webhook", Method: "POST", Path: "/v1/webhooks/" + failing + "/deliveries/" + failed + "/retry", Token: bob, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "retry with a text body", Method: "POST", Path: "/v1/webhooks/" + failing + "/deliveries/" + failed + "/retry", Token: alice, Body: "x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "retry with a huge body", Method: "POST", Path: "/v1/webhooks/" + failing + "/deliveries/" + failed + "/retry", Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		{Name: "delete another user's", Method: "DELETE", Path: "/v1/webhooks/" + bobs, Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "delete", Method: "DELETE", Path: "/v1/webhooks/" + silent, Token: alice, Status: 200, Contains: []string{`"deleted":true`}},
		{Name: "delete again", Method: "DELETE", Path: "/v1/webhooks/" + silent, Token: alice, Status: 404, Code: "NOT_FOUND"},

		{Name: "wrong method", Method: "PATCH", Path: "/v1/webhooks/" + ok + "/rotate-secret", Token: alice, Status: 405, Code: "METHOD_NOT_ALLOWED",
			HeaderIs: map[string]string{"Allow": "POST"}},
		{Name: "unknown sub-route", Method: "GET", Path: "/v1/webhooks/" + ok + "/secret", Token: alice, Status: 404, Code: "NOT_FOUND"},
	})
}
