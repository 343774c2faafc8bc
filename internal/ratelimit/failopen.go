package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// failOpen is the policy for a store that fails (Redis unreachable): the
// request goes through unchecked rather than every request failing, the
// failure is counted, and it is logged at most once per logEvery. After a
// failure the store is left alone for cooldown, so that a dead Redis costs
// one timeout per cooldown instead of one per request (a zero cooldown asks
// the store every time).
type failOpen struct {
	log      *slog.Logger
	metrics  *metrics
	cooldown time.Duration
	logEvery time.Duration

	// until is the Unix nanosecond before which the store is not asked.
	until atomic.Int64

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

// open reports whether the store is being left alone after a failure.
func (f *failOpen) open() bool {
	until := f.until.Load()
	return until != 0 && time.Now().UnixNano() < until
}

// skipped lets a request through without asking the store.
func (f *failOpen) skipped() Decision {
	f.metrics.failOpen.Inc()
	return Decision{Allowed: true}
}

// failed records a store error and lets the request through unchecked.
func (f *failOpen) failed(ctx context.Context, scope string, err error) Decision {
	now := time.Now()
	if f.cooldown > 0 {
		f.until.Store(now.Add(f.cooldown).UnixNano())
	}
	f.metrics.storeErrors.Inc()
	f.metrics.failOpen.Inc()

	f.mu.Lock()
	logNow := f.lastLog.IsZero() || now.Sub(f.lastLog) >= f.logEvery
	suppressed := f.suppressed
	if logNow {
		f.lastLog, f.suppressed = now, 0
	} else {
		f.suppressed++
	}
	f.mu.Unlock()
	if logNow {
		// err.Error(), not err: ulule wraps with pkg/errors, whose
		// verbose format would put a stack trace in the log line.
		f.log.WarnContext(ctx, "rate-limit store failed; letting requests through unchecked",
			"scope", scope, "err", err.Error(), "failures_not_logged", suppressed)
	}
	return Decision{Allowed: true}
}
