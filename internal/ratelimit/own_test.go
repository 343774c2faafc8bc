package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// TestOwnLimits: a caller's own limit replaces the window's for that
// caller only, shows in the decision (the X-RateLimit-* headers), prices a
// TakeN against it, and a changed limit applies to the count so far.
func TestOwnLimits(t *testing.T) {
	for name, store := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := testLimiter(t, store,
				Window{Name: WindowMinute, Limit: 10, Period: time.Minute},
				Window{Name: WindowHour, Limit: 100, Period: time.Hour})
			own := Own{WindowMinute: 3}
			id := ulid.Make().String()
			for i := range 3 {
				if d := l.Take(ctx, id, own); !d.Allowed || d.Window != WindowMinute || d.Limit != 3 || d.Remaining != int64(2-i) {
					t.Fatalf("request %d: got %+v, want allowed against the own limit of 3", i+1, d)
				}
			}
			if d := l.Take(ctx, id, own); d.Allowed || d.Limit != 3 || d.RetryAfter < 1 {
				t.Fatalf("fourth request: got %+v, want refused by the own limit of 3", d)
			}
			// Raised, the same window has room again for what it adds.
			if d := l.Take(ctx, id, Own{WindowMinute: 5}); !d.Allowed || d.Limit != 5 {
				t.Fatalf("after raising to 5: got %+v", d)
			}
			// Without own limits another caller keeps the server's.
			if d := l.Take(ctx, ulid.Make().String(), nil); !d.Allowed || d.Limit != 10 || d.Remaining != 9 {
				t.Fatalf("default caller: got %+v", d)
			}
			// A price above the own limit can never pass.
			if d := l.TakeN(ctx, ulid.Make().String(), 4, own); d.Allowed || !d.TooLarge || d.Limit != 3 {
				t.Fatalf("TakeN over the own limit: got %+v", d)
			}
			// An own hour limit binds when it has fewer left.
			if d := l.Take(ctx, ulid.Make().String(), Own{WindowHour: 2}); !d.Allowed || d.Window != WindowHour || d.Limit != 2 || d.Remaining != 1 {
				t.Fatalf("own hour limit: got %+v", d)
			}
		})
	}
}
