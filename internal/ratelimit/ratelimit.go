// Package ratelimit counts requests in fixed windows (ulule/limiter) and
// decides whether one more may pass: per API key for authenticated requests,
// per client address for failed logins. It knows nothing of HTTP, so REST and
// GraphQL share one budget through the same middleware.
package ratelimit

import (
	"context"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/ulule/limiter/v3"
)

// Window is one fixed window of a limit: at most Limit requests per Period.
type Window struct {
	// Name is how clients see the window (details.window): "minute", "hour".
	Name   string
	Limit  int64
	Period time.Duration
}

// Decision is the answer for one request.
type Decision struct {
	// Allowed is false when a window is exhausted.
	Allowed bool
	// Checked is false when the store failed and the request was let through
	// unchecked (fail-open); the other fields are then empty.
	Checked bool
	// Window, Limit, Remaining and Reset describe the window with the fewest
	// requests left, or the window that refused the request.
	Window    string
	Limit     int64
	Remaining int64
	// Reset is the Unix second by which the window starts afresh.
	Reset int64
	// RetryAfter is how many seconds a refused client should wait.
	RetryAfter int64
	// TooLarge is set when the request was refused because its price is
	// above the window's whole limit: waiting will not help.
	TooLarge bool
}

// The names of the per-key windows (Window.Name), which Own is keyed by.
const (
	WindowMinute = "minute"
	WindowHour   = "hour"
)

// Own is one caller's own limits, by window name: a window it names with a
// limit above zero counts against that limit instead of the limiter's. The
// counters are the same whichever limit applies (the store takes the rate
// on each call), so a change of limit takes effect on the next request and
// keeps what the window has counted so far. nil: the limiter's limits.
type Own map[string]int64

// Limiter holds the windows of one scope ("key", "login") over one store.
type Limiter struct {
	scope   string
	windows []window
	guard   *failOpen
}

type window struct {
	Window
	lim      *limiter.Limiter
	rejected *vm.Counter // requests this window refused
}

func newLimiter(scope string, store limiter.Store, guard *failOpen, m *metrics, windows ...Window) *Limiter {
	l := &Limiter{scope: scope, guard: guard}
	for _, w := range windows {
		l.windows = append(l.windows, window{Window: w, lim: limiter.New(store, limiter.Rate{Period: w.Period, Limit: w.Limit}),
			rejected: m.rejected(scope, w.Name)})
	}
	return l
}

// Take spends one request of id in each window, from the shortest to the
// longest, and stops at the first window that is exhausted: a request
// refused by the minute window is not counted in the hour window, so a
// client hammering through a 429 does not also burn its hourly budget.
func (l *Limiter) Take(ctx context.Context, id string, own Own) Decision {
	return l.visit(ctx, id, 1, true, own)
}

// TakeN spends n units of id in each window, for a request whose price is
// known (a GraphQL operation of n mutations). Unlike Take it checks every
// window before spending anything, so a request refused for its size spends
// nothing; two concurrent requests may each pass the check and together
// overspend by at most one request's price. A request priced above a
// window's whole limit can never pass: Decision.TooLarge says so.
func (l *Limiter) TakeN(ctx context.Context, id string, n int64, own Own) Decision {
	if n <= 1 {
		return l.Take(ctx, id, own)
	}
	best := l.visit(ctx, id, n, false, own)
	if !best.Allowed || !best.Checked {
		return best
	}
	for _, w := range l.windows {
		if _, err := w.lim.Store.Increment(ctx, l.key(w, id), n, w.rate(own)); err != nil {
			return l.guard.failed(ctx, l.scope, err)
		}
	}
	best.Remaining = max(best.Remaining-n, 0)
	return best
}

// Check reports whether id may make one more request without spending any:
// every window must have a request left. Use it with Spend to count only
// some outcomes (failed logins).
func (l *Limiter) Check(ctx context.Context, id string) Decision {
	return l.visit(ctx, id, 1, false, nil)
}

// visit asks each window, from the shortest to the longest, whether id has n
// requests left, spending one in each window it asks when spend is set
// (Take), and stops at the first that refuses. Otherwise it returns the
// window with the fewest left; a store that fails lets the request through
// unchecked (failOpen). own replaces the limits of the windows it names.
func (l *Limiter) visit(ctx context.Context, id string, n int64, spend bool, own Own) Decision {
	if l.guard.open() {
		return l.guard.skipped()
	}
	now := time.Now()
	var best Decision
	for i, w := range l.windows {
		var c limiter.Context
		var err error
		rate := w.rate(own)
		if spend {
			c, err = w.lim.Store.Get(ctx, l.key(w, id), rate)
		} else {
			c, err = w.lim.Store.Peek(ctx, l.key(w, id), rate)
		}
		if err != nil {
			return l.guard.failed(ctx, l.scope, err)
		}
		l.guard.answered()
		if !spend {
			// Peek reports the count so far: the request passes if n
			// more fit.
			c.Reached = c.Remaining < n
		}
		d := decide(w.Name, rate.Limit, c, now)
		if !d.Allowed {
			d.TooLarge = n > rate.Limit
			w.rejected.Inc()
			return d
		}
		if i == 0 || fewerLeft(d, best) {
			best = d
		}
	}
	return best
}

// Spend counts one request of id in every window, whatever its outcome.
func (l *Limiter) Spend(ctx context.Context, id string) {
	if l.guard.open() {
		l.guard.skipped()
		return
	}
	for _, w := range l.windows {
		if _, err := w.lim.Increment(ctx, l.key(w, id), 1); err != nil {
			l.guard.failed(ctx, l.scope, err)
			return
		}
		l.guard.answered()
	}
}

// rate is the window's rate for a caller with own limits.
func (w window) rate(own Own) limiter.Rate {
	r := w.lim.Rate
	if n := own[w.Name]; n > 0 {
		r.Limit = n
	}
	return r
}

// key names the counter of id in window w; the store adds its prefix.
func (l *Limiter) key(w window, id string) string {
	return l.scope + ":" + w.Name + ":" + id
}

// decide turns the store's answer for the window named name, whose limit
// is limit, into a Decision at time now.
func decide(name string, limit int64, c limiter.Context, now time.Time) Decision {
	// The store rounds the window's end down to the second; one more second
	// makes Reset a moment by which the window has certainly ended, so a
	// client that waits Retry-After is never refused again for the same
	// window.
	reset := c.Reset + 1
	d := Decision{
		Allowed:   !c.Reached,
		Checked:   true,
		Window:    name,
		Limit:     limit,
		Remaining: c.Remaining,
		Reset:     reset,
	}
	if c.Reached {
		d.Remaining = 0
		d.RetryAfter = max(reset-now.Unix(), 1)
	}
	return d
}

// fewerLeft reports whether d has fewer requests left than best; on a tie the
// window that resets later wins, being the one that binds longer.
func fewerLeft(d, best Decision) bool {
	return d.Remaining < best.Remaining || d.Remaining == best.Remaining && d.Reset > best.Reset
}
