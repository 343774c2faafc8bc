package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/ulule/limiter/v3"
)

// testStores returns the stores to run a test on: memory always, Redis when
// TEST_REDIS_URL is set (required in CI, like testutil.RedisURL; testutil
// itself cannot be imported here without a cycle). Each Redis store gets its
// own prefix so tests sharing a Redis never meet.
func testStores(t testing.TB) map[string]limiter.Store {
	t.Helper()
	stores := map[string]limiter.Store{"memory": newMemoryStore("test")}
	raw := os.Getenv("TEST_REDIS_URL")
	if raw == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatal("REQUIRE_POSTGRES=1 but TEST_REDIS_URL is not set")
		}
		return stores
	}
	client, err := newRedisClient(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	stores["redis"] = &lazyRedisStore{client: client, prefix: "itemsvc:test:" + ulid.Make().String()}
	return stores
}

func testLimiter(t testing.TB, store limiter.Store, windows ...Window) (*Limiter, *metrics) {
	t.Helper()
	m := newMetrics(nil)
	guard := &failOpen{log: slog.New(slog.DiscardHandler), metrics: m, cooldown: time.Second, logEvery: time.Minute}
	return newLimiter("key", store, guard, m, windows...), m
}

// TestTakeWindows follows one key through two windows: the short one
// refuses first, its refusals are not counted in the long one, it starts
// afresh when its period is over, and then the long one refuses.
func TestTakeWindows(t *testing.T) {
	for name, store := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l, m := testLimiter(t, store,
				Window{Name: "second", Limit: 2, Period: time.Second},
				Window{Name: "hour", Limit: 3, Period: time.Hour})
			id := ulid.Make().String()

			steps := []struct {
				name          string
				allowed       bool
				window        string
				limit, remain int64
			}{
				{"first: second window has fewest left", true, "second", 2, 1},
				{"second: second window exhausted", true, "second", 2, 0},
				{"third: refused by the second window", false, "second", 2, 0},
				{"fourth: still refused, not counted in the hour", false, "second", 2, 0},
			}
			for _, s := range steps {
				d := l.Take(ctx, id, nil)
				if d.Allowed != s.allowed || d.Window != s.window || d.Limit != s.limit || d.Remaining != s.remain || !d.Checked {
					t.Fatalf("%s: got %+v", s.name, d)
				}
				now := time.Now().Unix()
				if d.Reset < now || d.Reset > now+2 {
					t.Errorf("%s: Reset %d, want within 2s of %d", s.name, d.Reset, now)
				}
				if !s.allowed && (d.RetryAfter < 1 || d.RetryAfter > 2) {
					t.Errorf("%s: RetryAfter %d, want 1..2", s.name, d.RetryAfter)
				}
			}

			// When the second window is over, the third request of the
			// hour passes: the refusals above did not spend the hour.
			var d Decision
			if !eventually(3*time.Second, func() bool { d = l.Take(ctx, id, nil); return d.Allowed }) {
				t.Fatalf("the second window never reset: %+v", d)
			}
			if d.Window != "hour" || d.Limit != 3 || d.Remaining != 0 {
				t.Fatalf("after reset: got %+v, want the hour window with 0 left", d)
			}
			d = l.Take(ctx, id, nil)
			now := time.Now().Unix()
			if d.Allowed || d.Window != "hour" || d.RetryAfter < 3590 || d.RetryAfter > 3601 || d.Reset != now+d.RetryAfter {
				t.Fatalf("hour exhausted: got %+v at %d", d, now)
			}
			if got := m.rejected("key", "hour").Get(); got != 1 {
				t.Errorf("rejected{hour} = %v, want 1", got)
			}

			// Another id has its own budget.
			if d := l.Take(ctx, ulid.Make().String(), nil); !d.Allowed || d.Remaining != 1 {
				t.Errorf("other id: got %+v", d)
			}
		})
	}
}

// TestCheckSpend counts only what is spent: Check never spends, and refuses
// once the spent requests reach the limit.
func TestCheckSpend(t *testing.T) {
	for name, store := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := testLimiter(t, store, Window{Name: "minute", Limit: 2, Period: time.Minute})
			id := "198.51.100.7"
			for i := range 5 {
				if d := l.Check(ctx, id); !d.Allowed || d.Remaining != 2 {
					t.Fatalf("check %d before spending: %+v", i, d)
				}
			}
			l.Spend(ctx, id)
			if d := l.Check(ctx, id); !d.Allowed || d.Remaining != 1 {
				t.Fatalf("after one spend: %+v", d)
			}
			l.Spend(ctx, id)
			d := l.Check(ctx, id)
			if d.Allowed || d.Remaining != 0 || d.RetryAfter < 59 || d.RetryAfter > 61 {
				t.Fatalf("after two spends: %+v", d)
			}
		})
	}
}

// TestDecideReset pins the rounding of Reset and Retry-After: the store
// rounds the window's end down, Reset rounds it up, and Retry-After counts
// from the current second, so waiting it is always enough.
func TestDecideReset(t *testing.T) {
	w := window{Window: Window{Name: "minute", Limit: 3, Period: time.Minute}}
	now := time.Unix(1_800_000_000, 900_000_000)
	tests := []struct {
		name  string
		c     limiter.Context
		want  Decision
		retry int64
	}{
		{"allowed", limiter.Context{Limit: 3, Remaining: 2, Reset: 1_800_000_059},
			Decision{Allowed: true, Checked: true, Window: "minute", Limit: 3, Remaining: 2, Reset: 1_800_000_060}, 0},
		{"refused", limiter.Context{Limit: 3, Remaining: 0, Reset: 1_800_000_059, Reached: true},
			Decision{Checked: true, Window: "minute", Limit: 3, Remaining: 0, Reset: 1_800_000_060, RetryAfter: 60}, 60},
		{"refused at the very end", limiter.Context{Limit: 3, Reset: 1_799_999_999, Reached: true},
			Decision{Checked: true, Window: "minute", Limit: 3, Reset: 1_800_000_000, RetryAfter: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(w.Name, w.Limit, tt.c, now); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// brokenStore fails every call, as Redis does when it is down.
type brokenStore struct{ calls int }

var errDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (s *brokenStore) Get(context.Context, string, limiter.Rate) (limiter.Context, error) {
	s.calls++
	return limiter.Context{}, errDown
}
func (s *brokenStore) Peek(context.Context, string, limiter.Rate) (limiter.Context, error) {
	s.calls++
	return limiter.Context{}, errDown
}
func (s *brokenStore) Reset(context.Context, string, limiter.Rate) (limiter.Context, error) {
	s.calls++
	return limiter.Context{}, errDown
}
func (s *brokenStore) Increment(context.Context, string, int64, limiter.Rate) (limiter.Context, error) {
	s.calls++
	return limiter.Context{}, errDown
}

// TestFailOpen lets requests through when the store fails, counts each, logs
// once per interval, and leaves the store alone during the cooldown.
func TestFailOpen(t *testing.T) {
	tests := []struct {
		name      string
		cooldown  time.Duration
		wantCalls int
	}{
		{"no cooldown: every request asks the store", 0, 100},
		{"cooldown: one failure, then the store is left alone", time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			store := &brokenStore{}
			m := newMetrics(nil)
			guard := &failOpen{log: slog.New(slog.NewTextHandler(&logs, nil)), metrics: m, cooldown: tt.cooldown, logEvery: time.Hour}
			l := newLimiter("key", store, guard, m, Window{Name: "minute", Limit: 1, Period: time.Minute})
			for i := range 100 {
				if d := l.Take(context.Background(), "k", nil); !d.Allowed || d.Checked {
					t.Fatalf("request %d: got %+v, want allowed unchecked", i, d)
				}
			}
			if store.calls != tt.wantCalls {
				t.Errorf("store calls = %d, want %d", store.calls, tt.wantCalls)
			}
			if got := m.failOpen.Get(); got != 100 {
				t.Errorf("fail_open = %v, want 100", got)
			}
			if got := m.storeErrors.Get(); got != uint64(store.calls) {
				t.Errorf("store_errors = %v, want %d", got, store.calls)
			}
			if n := strings.Count(logs.String(), "rate-limit store failed"); n != 1 {
				t.Errorf("logged %d times, want once:\n%s", n, logs.String())
			}
		})
	}
}

// eventually polls cond until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTakeN follows one key spending several units at a time (a GraphQL
// operation's points): it spends them in every window, a request that does
// not fit spends nothing, and one larger than a window can never pass.
func TestTakeN(t *testing.T) {
	for name, store := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := testLimiter(t, store,
				Window{Name: "minute", Limit: 10, Period: time.Minute},
				Window{Name: "hour", Limit: 12, Period: time.Hour})
			id := ulid.Make().String()
			steps := []struct {
				n        int64
				allowed  bool
				window   string
				remain   int64
				tooLarge bool
			}{
				{4, true, "minute", 6, false},
				{1, true, "minute", 5, false},
				{6, false, "minute", 0, false}, // 5 left in the minute: refused, nothing spent
				{5, true, "minute", 0, false},  // minute 0 left, hour 2
				{13, false, "minute", 0, true}, // above any window's limit
			}
			for i, s := range steps {
				d := l.TakeN(ctx, id, s.n, nil)
				if d.Allowed != s.allowed || d.Window != s.window || d.Remaining != s.remain || d.TooLarge != s.tooLarge || !d.Checked {
					t.Fatalf("step %d (n=%d): %+v, want allowed=%v window=%s remaining=%d tooLarge=%v", i, s.n, d, s.allowed, s.window, s.remain, s.tooLarge)
				}
				if !d.Allowed && d.RetryAfter < 1 {
					t.Fatalf("step %d: refused without Retry-After: %+v", i, d)
				}
			}
		})
	}
}

// hungStore fails its first call at once and hangs its second until
// release is closed (a Redis that stopped answering); any further call
// fails at once, and is counted.
type hungStore struct {
	brokenStore
	calls   atomic.Int64
	started chan struct{}
	release chan struct{}
}

func (s *hungStore) Get(ctx context.Context, key string, r limiter.Rate) (limiter.Context, error) {
	if n := s.calls.Add(1); n != 2 {
		return limiter.Context{}, errDown
	}
	s.started <- struct{}{}
	<-s.release
	return limiter.Context{}, errDown
}

// TestFailOpenSingleFlight: after the cooldown one request probes a hung
// store; every other request meanwhile goes through unchecked at once
// instead of waiting for the store's timeout too.
func TestFailOpenSingleFlight(t *testing.T) {
	store := &hungStore{started: make(chan struct{}), release: make(chan struct{})}
	m := newMetrics(nil)
	guard := &failOpen{log: slog.New(slog.DiscardHandler), metrics: m, cooldown: time.Nanosecond, logEvery: time.Hour}
	l := newLimiter("key", store, guard, m, Window{Name: "minute", Limit: 1, Period: time.Minute})
	ctx := context.Background()

	l.Take(ctx, "k", nil) // fails at once: the cooldown starts, and is over
	probe := make(chan Decision)
	go func() { probe <- l.Take(ctx, "k", nil) }()
	<-store.started // the probe is waiting for the store
	for i := range 50 {
		if d := l.Take(ctx, "k", nil); !d.Allowed || d.Checked {
			t.Fatalf("request %d during the probe: %+v, want allowed unchecked", i, d)
		}
	}
	if got := store.calls.Load(); got != 2 {
		t.Fatalf("%d store calls, want 2 (the first failure and one probe)", got)
	}
	close(store.release)
	if d := <-probe; !d.Allowed || d.Checked {
		t.Fatalf("probe: %+v", d)
	}
}
