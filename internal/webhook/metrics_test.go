package webhook_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// metricValue returns the value of a metric (with one label pair, or none)
// as /metrics serves it, and whether it is exported.
func metricValue(t *testing.T, env *testutil.Env, name, label, value string) (float64, bool) {
	t.Helper()
	m := env.Scrape()
	var labels map[string]string
	if label != "" {
		labels = map[string]string{label: value}
	}
	return m.Value(name, labels), m.Has(name)
}

// TestMetrics: outcomes, queue depth and attempt latency are exported at
// /metrics.
func TestMetrics(t *testing.T) {
	env := testutil.New(t, fastWebhooks(time.Hour))
	rc := newReceiver(t)
	register(t, env, env.Alice, rc.URL)
	env.CreateItem(env.Alice, "x")
	if v, ok := metricValue(t, env, "itemsvc_webhook_undispatched_events", "", ""); !ok || v != 1 {
		t.Errorf("undispatched events = %v (exported %v), want 1", v, ok)
	}
	start(t, env)
	rc.waitFor(t, 10*time.Second, func(received) bool { return true })
	rc.setAnswer(func(*http.Request) (int, http.Header) { return 500, nil })
	env.CreateItem(env.Alice, "y")
	rc.waitFor(t, 10*time.Second, func(received) bool { return true })

	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ok, _ := metricValue(t, env, "itemsvc_webhook_deliveries_total", "outcome", "succeeded")
		retrying, _ := metricValue(t, env, "itemsvc_webhook_deliveries_total", "outcome", "retrying")
		return ok == 1 && retrying == 1
	}) {
		t.Error("outcome counters did not reach succeeded=1, retrying=1")
	}
	if v, ok := metricValue(t, env, "itemsvc_webhook_queue_depth", "", ""); !ok || v != 1 {
		t.Errorf("queue depth = %v (exported %v), want 1 (the retrying delivery)", v, ok)
	}
	if v, ok := metricValue(t, env, "itemsvc_webhook_attempt_duration_seconds", "", ""); !ok || v != 2 {
		t.Errorf("attempt latency samples = %v (exported %v), want 2", v, ok)
	}
}
