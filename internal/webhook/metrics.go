package webhook

import (
	"context"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/webhookendpoint"
)

// Outcomes of an attempt, the label of the deliveries counter.
const (
	OutcomeSucceeded = "succeeded" // 2xx: delivered
	OutcomeRetrying  = "retrying"  // failed, another attempt is scheduled
	OutcomeFailed    = "failed"    // failed, no attempt left
	OutcomeDisabled  = "disabled"  // 410 Gone: the endpoint is turned off
)

// attemptBuckets are the upper bounds of the attempt duration histogram.
var attemptBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15}

// metrics are the dispatcher's series.
type metrics struct {
	outcomes map[string]*vm.Counter // by outcome
	latency  *vm.PrometheusHistogram
	trips    *vm.Counter
	// unopenable counts attempts failed here, unsent, because the
	// endpoint's secret does not open with SECRET_KEY.
	unopenable *vm.Counter
}

// newMetrics makes the series in set (nil: not exported). Queue depths are
// counted in the database at scrape time, so every replica reports the same
// truth rather than what it happened to see.
func newMetrics(set *vm.Set, client *ent.Client) *metrics {
	exported := set != nil
	if !exported {
		set = vm.NewSet()
	}
	m := &metrics{
		// Delivery attempts by outcome: succeeded, retrying, failed, disabled.
		outcomes: map[string]*vm.Counter{},
		// Duration of webhook HTTP attempts, until the answer or the error.
		latency: set.NewPrometheusHistogramExt("itemsvc_webhook_attempt_duration_seconds", attemptBuckets),
		// Failed attempts that made their endpoint back off (its failures in
		// a row reached the breaker's threshold).
		trips: set.NewCounter("itemsvc_webhook_breaker_trips_total"),
		// Attempts that failed without being sent, the server's fault and
		// not the receiver's: the endpoint's signing secret does not open
		// with this SECRET_KEY (it changed). They do not count against the
		// endpoint's breaker.
		unopenable: set.NewCounter(`itemsvc_webhook_attempts_failed_locally_total{reason="secret_unopenable"}`),
	}
	for _, o := range []string{OutcomeSucceeded, OutcomeRetrying, OutcomeFailed, OutcomeDisabled} {
		m.outcomes[o] = set.NewCounter(`itemsvc_webhook_deliveries_total{outcome="` + o + `"}`)
	}
	if !exported {
		return m
	}
	// The gauges read the database: -1 when it did not answer.
	count := func(f func(ctx context.Context) (int, error)) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := f(privacy.DecisionContext(ctx, privacy.Allow))
			if err != nil {
				return -1
			}
			return float64(n)
		}
	}
	// Endpoints whose deliveries the circuit breaker holds now.
	set.NewGauge("itemsvc_webhook_endpoints_backing_off", count(func(ctx context.Context) (int, error) {
		return client.WebhookEndpoint.Query().Where(webhookendpoint.BackoffUntilGT(time.Now())).Count(ctx)
	}))
	// Deliveries waiting to be sent (pending, due now or later).
	set.NewGauge("itemsvc_webhook_queue_depth", count(func(ctx context.Context) (int, error) {
		return client.Delivery.Query().Where(delivery.StateEQ(delivery.StatePending)).Count(ctx)
	}))
	// Outbox events not yet turned into deliveries.
	set.NewGauge("itemsvc_webhook_undispatched_events", count(func(ctx context.Context) (int, error) {
		return client.Event.Query().Where(event.DispatchedAtIsNil()).Count(ctx)
	}))
	return m
}
