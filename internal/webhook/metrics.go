package webhook

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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

// metrics are the dispatcher's collectors.
type metrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
	trips    prometheus.Counter
}

// newMetrics registers the collectors on reg (nil: not exported). Queue
// depths are counted in the database at scrape time, so every replica
// reports the same truth rather than what it happened to see.
func newMetrics(reg prometheus.Registerer, client *ent.Client) *metrics {
	m := &metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "itemsvc_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded, retrying, failed, disabled.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "itemsvc_webhook_attempt_duration_seconds",
			Help:    "Duration of webhook HTTP attempts, until the answer or the error.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		trips: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "itemsvc_webhook_breaker_trips_total",
			Help: "Failed attempts that made their endpoint back off (its failures in a row reached the breaker's threshold).",
		}),
	}
	if reg == nil {
		return m
	}
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
	reg.MustRegister(
		m.outcomes,
		m.latency,
		m.trips,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "itemsvc_webhook_endpoints_backing_off",
			Help: "Webhook endpoints whose deliveries are held by the circuit breaker now; -1 when the database did not answer.",
		}, count(func(ctx context.Context) (int, error) {
			return client.WebhookEndpoint.Query().Where(webhookendpoint.BackoffUntilGT(time.Now())).Count(ctx)
		})),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "itemsvc_webhook_queue_depth",
			Help: "Webhook deliveries waiting to be sent (pending, due now or later); -1 when the database did not answer.",
		}, count(func(ctx context.Context) (int, error) {
			return client.Delivery.Query().Where(delivery.StateEQ(delivery.StatePending)).Count(ctx)
		})),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "itemsvc_webhook_undispatched_events",
			Help: "Outbox events not yet turned into deliveries; -1 when the database did not answer.",
		}, count(func(ctx context.Context) (int, error) {
			return client.Event.Query().Where(event.DispatchedAtIsNil()).Count(ctx)
		})),
	)
	for _, o := range []string{OutcomeSucceeded, OutcomeRetrying, OutcomeFailed, OutcomeDisabled} {
		m.outcomes.WithLabelValues(o)
	}
	return m
}
