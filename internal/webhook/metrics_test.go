package webhook_test

import (
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/acme/itemsvc/internal/testutil"
)

// metricValue returns the value of a metric (with one label pair, or none)
// from the app's registry, and whether it exists.
func metricValue(t *testing.T, env *testutil.Env, name, label, value string) (float64, bool) {
	t.Helper()
	families, err := env.App.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label != "" && !hasLabel(m, label, value) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestMetrics: outcomes, queue depth and attempt latency are exported on the
// app's registry.
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
