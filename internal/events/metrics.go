package events

import "github.com/prometheus/client_golang/prometheus"

// metrics are the hub's collectors.
type metrics struct {
	subscribers prometheus.Gauge
	dropped     prometheus.Counter
	fanout      prometheus.Histogram
}

// newMetrics registers the collectors on reg (nil: not exported).
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "itemsvc_event_subscribers",
			Help: "Event streams (REST SSE and GraphQL subscriptions) open on this server and receiving live events.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "itemsvc_event_slow_consumers_total",
			Help: "Event streams closed with SLOW_CONSUMER because their buffer was full.",
		}),
		fanout: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "itemsvc_event_fanout_latency_seconds",
			Help:    "Time from an event's write (its created_at) to its fan-out to this server's subscribers.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
	}
	if reg != nil {
		reg.MustRegister(m.subscribers, m.dropped, m.fanout)
	}
	return m
}
