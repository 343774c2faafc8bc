package ratelimit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the limiter's collectors, registered on the app's registry.
type metrics struct {
	rejected    *prometheus.CounterVec
	storeErrors prometheus.Counter
	failOpen    prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "itemsvc_ratelimit_rejected_total",
			Help: "Requests refused with 429, by scope (key, login) and window (minute, hour).",
		}, []string{"scope", "window"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "itemsvc_ratelimit_store_errors_total",
			Help: "Failed calls to the rate-limit store (Redis).",
		}),
		failOpen: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "itemsvc_ratelimit_fail_open_total",
			Help: "Requests let through unchecked because the rate-limit store failed or was cooling down.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.rejected, m.storeErrors, m.failOpen} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register rate-limit metrics: %w", err)
		}
	}
	return m, nil
}
