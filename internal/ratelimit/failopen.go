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
// the store every time). When the cooldown is over, a single request probes
// the store while the others keep going through unchecked until it answers,
// so a hung store (not refusing, just silent) makes one request per cooldown
// wait for its timeout, not every request that arrives meanwhile.
type failOpen struct {
	log      *slog.Logger
	metrics  *metrics
	cooldown time.Duration
	logEvery time.Duration

	// until is the Unix nanosecond before which the store is not asked;
	// zero while the store is healthy.
	until atomic.Int64
	// probing is set while one request asks the store after a cooldown.
	probing atomic.Bool

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

// open reports whether the store is being left alone after a failure: during
// the cooldown, and after it for every request but the one that probes it.
func (f *failOpen) open() bool {
	until := f.until.Load()
	if until == 0 {
		return false
	}
	if time.Now().UnixNano() < until {
		return true
	}
	return !f.probing.CompareAndSwap(false, true)
}

// answered records that the store answered: the probe, if any, is over and
// the store is healthy again.
func (f *failOpen) answered() {
	if f.until.Load() != 0 {
		f.until.Store(0)
		f.probing.Store(false)
	}
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
		f.probing.Store(false)
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
