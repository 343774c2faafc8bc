package events

import vm "github.com/VictoriaMetrics/metrics"

// fanoutBuckets are the upper bounds of the fan-out latency histogram.
var fanoutBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// metrics are the hub's series.
type metrics struct {
	subscribers *vm.Gauge
	dropped     *vm.Counter
	fanout      *vm.PrometheusHistogram
}

// newMetrics makes the series in set (nil: not exported).
func newMetrics(set *vm.Set) *metrics {
	if set == nil {
		set = vm.NewSet()
	}
	return &metrics{
		// Event streams (REST SSE and GraphQL subscriptions) open on this
		// server and receiving live events.
		subscribers: set.NewGauge("itemsvc_event_subscribers", nil),
		// Event streams closed with SLOW_CONSUMER because their buffer was full.
		dropped: set.NewCounter("itemsvc_event_slow_consumers_total"),
		// Time from an event's write (its created_at) to its fan-out to this
		// server's subscribers.
		fanout: set.NewPrometheusHistogramExt("itemsvc_event_fanout_latency_seconds", fanoutBuckets),
	}
}
