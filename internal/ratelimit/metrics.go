package ratelimit

import (
	"fmt"

	vm "github.com/VictoriaMetrics/metrics"
)

// metrics are the limiter's series, in the app's metrics set.
type metrics struct {
	set         *vm.Set
	storeErrors *vm.Counter
	failOpen    *vm.Counter
}

// newMetrics makes the series in set; nil keeps them unexported.
func newMetrics(set *vm.Set) *metrics {
	if set == nil {
		set = vm.NewSet()
	}
	return &metrics{
		set: set,
		// Failed calls to the rate-limit store (Redis).
		storeErrors: set.NewCounter("itemsvc_ratelimit_store_errors_total"),
		// Requests let through unchecked because the store failed or was
		// cooling down.
		failOpen: set.NewCounter("itemsvc_ratelimit_fail_open_total"),
	}
}

// rejected is the counter of requests refused with 429 in one window of one
// scope (key, login, anonymous).
func (m *metrics) rejected(scope, window string) *vm.Counter {
	return m.set.GetOrCreateCounter(fmt.Sprintf(`itemsvc_ratelimit_rejected_total{scope=%q,window=%q}`, scope, window))
}
