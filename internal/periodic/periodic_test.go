package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/periodic"
)

// TestRun: one row per promise of Run: the first call comes at once, later
// ones every interval, never two at a time, none once ctx has ended, and
// Run returns when it ends, also while it waits between calls.
func TestRun(t *testing.T) {
	cases := []struct {
		name  string
		every time.Duration
		// calls is how many calls to wait for before ending ctx; 0 ends
		// it before Run starts.
		calls int
	}{
		{"first call at once, long before the interval", time.Hour, 1},
		{"again after each call", time.Millisecond, 5},
		{"no call once ctx has ended", time.Millisecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var running, overlapped atomic.Bool
			var calls atomic.Int64
			called := make(chan struct{}, 1)
			f := func(ctx context.Context) {
				if running.Swap(true) {
					overlapped.Store(true)
				}
				if ctx.Err() != nil {
					t.Error("called after ctx ended")
				}
				calls.Add(1)
				select {
				case called <- struct{}{}:
				default:
				}
				running.Store(false)
			}
			if c.calls == 0 {
				cancel()
			}
			done := make(chan struct{})
			go func() { defer close(done); periodic.Run(ctx, c.every, f) }()
			for calls.Load() < int64(c.calls) {
				select {
				case <-called:
				case <-time.After(10 * time.Second):
					t.Fatalf("%d calls within 10s, want %d", calls.Load(), c.calls)
				}
			}
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return once ctx ended")
			}
			if c.calls == 0 && calls.Load() != 0 {
				t.Errorf("%d calls after ctx ended", calls.Load())
			}
			if overlapped.Load() {
				t.Error("two calls ran at once")
			}
		})
	}
}
