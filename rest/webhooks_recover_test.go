package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestWebhookRecover: POST /v1/webhooks/{id}/recover re-queues the failed
// deliveries created since a time, one row per documented status.
func TestWebhookRecover(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.WebhookAllowPrivate = true // the receivers listen on loopback
		c.WebhookRetrySchedule = []time.Duration{10 * time.Millisecond}
	}), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.PollInterval = 10 * time.Millisecond
		o.Webhooks.Jitter = func(d time.Duration) time.Duration { return d }
		o.Webhooks.DrainTimeout = 100 * time.Millisecond
		o.Webhooks.BreakerThreshold = 100 // the attempts run out before the breaker engages
	}))
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	alices := createWebhook(t, env, env.Alice, down.URL+"/alice")
	bobs := createWebhook(t, env, env.Bob, down.URL+"/bob")
	paused := createWebhook(t, env, env.Alice, down.URL+"/paused")
	env.App.Start(t.Context())

	// failed waits until an endpoint has n failed deliveries (read from the
	// database: polling the API would spend the rate limit).
	failed := func(webhook string, n int) {
		t.Helper()
		ctx := privacy.DecisionContext(t.Context(), privacy.Allow)
		q := env.App.DB.Client.Delivery.Query().Where(delivery.EndpointID(webhook), delivery.StateEQ(delivery.StateFailed))
		if !testutil.Eventually(t, 10*time.Second, func() bool {
			got, err := q.Clone().Count(ctx)
			return err == nil && got == n
		}) {
			t.Fatalf("%s: failed deliveries never reached %d", webhook, n)
		}
	}
	start := time.Now().UTC()
	env.CreateItem(env.Alice, "before the cut")
	failed(alices, 1)
	failed(paused, 1)
	cut := time.Now().UTC()
	env.CreateItem(env.Alice, "after the cut")
	env.CreateItem(env.Alice, "after the cut too")
	env.CreateItem(env.Bob, "bob's")
	failed(alices, 3)
	failed(paused, 3)
	failed(bobs, 1)
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + paused, Token: env.Alice.Token, Body: map[string]any{"active": false}}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	done := time.Now().UTC()

	alice, bob, admin := env.Alice.Token, env.Bob.Token, env.Admin.Token
	const unknown = "whk_01jd0000000000000000000000"
	path := func(id string) string { return "/v1/webhooks/" + id + "/recover" }
	since := func(t time.Time) map[string]any { return map[string]any{"since": t.Format(time.RFC3339Nano)} }
	text := map[string]string{"Content-Type": "text/plain"}
	big := `{"since":"` + strings.Repeat("x", 1<<20) + `"}`

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "nothing failed since then", Method: "POST", Path: path(alices), Token: alice, Body: since(done),
			Status: 200, Contains: []string{`"requeued":0`, `"webhook_id":"` + alices + `"`}},
		{Name: "only those created since the time", Method: "POST", Path: path(alices), Token: alice, Body: since(cut),
			Status: 200, Contains: []string{`"requeued":2`}},
		{Name: "an admin recovers anyone's", Method: "POST", Path: path(bobs), Token: admin, Body: since(start),
			Status: 200, Contains: []string{`"requeued":1`}},
		{Name: "since with an offset", Method: "POST", Path: path(bobs), Token: bob,
			Body:   map[string]any{"since": done.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)},
			Status: 200, Contains: []string{`"requeued":0`}},
		{Name: "since missing", Method: "POST", Path: path(alices), Token: alice, Body: map[string]any{},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"since"`, "is required"}},
		{Name: "since not a timestamp", Method: "POST", Path: path(alices), Token: alice, Body: map[string]any{"since": "yesterday"},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"since"`, "RFC 3339"}},
		{Name: "since not a string", Method: "POST", Path: path(alices), Token: alice, Body: map[string]any{"since": 1700000000},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"since"`}},
		{Name: "since in the future", Method: "POST", Path: path(alices), Token: alice, Body: since(time.Now().Add(time.Hour)),
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"since"`, "future"}},
		{Name: "unknown field", Method: "POST", Path: path(alices), Token: alice, Body: map[string]any{"since": cut.Format(time.RFC3339), "state": "failed"},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"state"`}},
		{Name: "no body", Method: "POST", Path: path(alices), Token: alice,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "paused webhook", Method: "POST", Path: path(paused), Token: alice, Body: since(start),
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"active"`}},
		{Name: "no token", Method: "POST", Path: path(alices), Body: since(start), Status: 401, Code: "UNAUTHORIZED"},
		{Name: "another user's webhook", Method: "POST", Path: path(bobs), Token: alice, Body: since(start), Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "unknown webhook", Method: "POST", Path: path(unknown), Token: alice, Body: since(start), Status: 404, Code: "NOT_FOUND"},
		{Name: "text body", Method: "POST", Path: path(alices), Token: alice, Body: "since=now", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "huge body", Method: "POST", Path: path(alices), Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},
		{Name: "wrong method", Method: "GET", Path: path(alices), Token: alice, Status: 405, Code: "METHOD_NOT_ALLOWED",
			HeaderIs: map[string]string{"Allow": "POST"}},
	})
}
