package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// wait bounds every wait of these tests for something observable; on
// PostgreSQL that includes another package's long transaction, which holds
// the feeds back (rest's TestEventOrderAcrossReplicas keeps one open).
const wait = 30 * time.Second

// feed is a hub of its own over a test server's database: it reads the
// outbox when the test says so (Notify after a write; the poll is an hour
// away), so that what a read holds is up to the test.
type feed struct {
	t    *testing.T
	env  *testutil.Env
	hub  *events.Hub
	stop context.CancelFunc
	done chan struct{}
}

func newFeed(t *testing.T, opts events.Options) *feed {
	t.Helper()
	// The tests write a few hundred items with one key.
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 100_000, 100_000
	}))
	opts.PollInterval = time.Hour
	// On PostgreSQL an event may be held back while an older transaction
	// anywhere on the server (another package's test) stays open; the hub
	// then looks again by itself, as the server's does.
	opts.Concurrent = testutil.OnPostgres()
	if opts.Concurrent {
		opts.PollInterval = time.Second // the longest pause between those looks
	}
	hub := events.New(env.App.DB.Client, opts)
	ctx, stop := context.WithCancel(context.Background())
	f := &feed{t: t, env: env, hub: hub, stop: stop, done: make(chan struct{})}
	go func() { defer close(f.done); hub.Run(ctx) }()
	t.Cleanup(func() { stop(); <-f.done })
	return f
}

// as is the viewer of an actor.
func as(a testutil.Actor, role viewer.Role) viewer.Viewer {
	return viewer.Viewer{UserID: a.UserID, KeyID: a.KeyID, Role: role}
}

// subscribe opens a stream as v, closed at the end of the test.
func (f *feed) subscribe(v viewer.Viewer, filter events.Filter) *events.Subscription {
	f.t.Helper()
	s, err := f.hub.Subscribe(context.Background(), v, filter)
	if err != nil {
		f.t.Fatalf("subscribe: %v", err)
	}
	f.t.Cleanup(s.Close)
	return s
}

// create makes one item per name as a, then wakes the hub once.
func (f *feed) create(a testutil.Actor, names ...string) {
	f.t.Helper()
	for _, n := range names {
		f.env.CreateItem(a, n)
	}
	f.hub.Notify()
}

// next is the stream's next event, failing the test after wait.
func next(t *testing.T, s *events.Subscription) events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ev, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return ev
}

// itemName is the name of the item an event carries.
func itemName(ev events.Event) string {
	var it struct{ Name string }
	_ = json.Unmarshal(ev.Item, &it)
	return it.Name
}

// names reads n events and returns their items' names, checking that their
// positions in the feeds' order rise.
func names(t *testing.T, s *events.Subscription, n int) []string {
	t.Helper()
	var out []string
	var last events.Position
	for range n {
		ev := next(t, s)
		if !last.Less(ev.Position()) {
			t.Fatalf("event %s at %+v after %+v", ev.ID, ev.Position(), last)
		}
		last = ev.Position()
		out = append(out, itemName(ev))
	}
	return out
}

// noMore fails if an event is at hand.
func noMore(t *testing.T, s *events.Subscription) {
	t.Helper()
	if ev, ok := s.TryNext(); ok {
		t.Fatalf("unexpected event %s (%s)", ev.ID, itemName(ev))
	}
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestFanOut(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	alice := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{})
	bob := f.subscribe(as(env.Bob, viewer.RoleUser), events.Filter{})
	admin := f.subscribe(as(env.Admin, viewer.RoleAdmin), events.Filter{})
	created := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{Types: []string{"item.created"}})

	var all []string
	for i := range 5 {
		a, b := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		f.env.CreateItem(env.Alice, a)
		f.env.CreateItem(env.Bob, b)
		all = append(all, a, b)
	}
	// One read of the outbox takes all ten events.
	f.hub.Notify()
	id := env.CreateItem(env.Alice, "a5")
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token}); r.Status/100 != 2 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	f.hub.Notify()
	all = append(all, "a5", "a5")

	for _, tc := range []struct {
		name string
		s    *events.Subscription
		want []string
	}{
		{"owner sees their events in order", alice, append(seq("a", 6), "a5")},
		{"another user sees only theirs", bob, seq("b", 5)},
		{"an admin sees every event in order", admin, all},
		{"a type filter keeps its types", created, seq("a", 6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(t, tc.s, len(tc.want))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			noMore(t, tc.s)
		})
	}
}

func TestReplayThenLive(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1, Buffer: 1000})
	env := f.env
	// The admin's stream from now on records every event's seq.
	admin := f.subscribe(as(env.Admin, viewer.RoleAdmin), events.Filter{})
	f.create(env.Alice, "a0", "a1")
	cursor := next(t, admin).Position() // a0: the client has it
	next(t, admin)
	// More than one replay page (200) waits past the cursor.
	f.create(env.Alice, seq("r", 210)...)
	want := append([]string{"a1"}, seq("r", 210)...)

	s := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{After: cursor})
	// While the stream replays, more events are written: each must come
	// once, in order, replayed or live.
	writes := make(chan error, 1)
	go func() {
		for i := range 30 {
			r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": fmt.Sprintf("l%d", i)}})
			if r.Status != 201 {
				writes <- fmt.Errorf("create: %d %s", r.Status, r.Body)
				return
			}
			f.hub.Notify()
		}
		writes <- nil
	}()
	want = append(want, seq("l", 30)...)
	got := names(t, s, len(want))
	if err := <-writes; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v,\nwant %v", got, want)
	}
	noMore(t, s)
	// And live after the hand-over.
	f.create(env.Alice, "after")
	if got := names(t, s, 1); got[0] != "after" {
		t.Fatalf("live event after replay: %v", got)
	}
	noMore(t, s)
}

func TestSlowConsumer(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1, Buffer: 4})
	env := f.env
	slow := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{})
	keeping := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{})

	// Four events fill the slow stream's buffer; the stream that keeps up
	// takes them. The next event finds the slow one full.
	f.create(env.Alice, seq("a", 4)...)
	got := names(t, keeping, 4)
	f.create(env.Alice, "a4")
	got = append(got, names(t, keeping, 1)...)
	select {
	case <-slow.Ended():
	case <-time.After(wait):
		t.Fatal("the slow stream was not ended")
	}
	var e *apperr.Error
	if !errors.As(slow.Err(), &e) || e.Code != apperr.CodeSlowConsumer {
		t.Fatalf("ended with %v, want SLOW_CONSUMER", slow.Err())
	}
	// It still hands out what it had queued, then the reason.
	if got := names(t, slow, 4); fmt.Sprint(got) != fmt.Sprint(seq("a", 4)) {
		t.Fatalf("queued before the end: %v", got)
	}
	if _, err := slow.Next(context.Background()); !errors.As(err, &e) || e.Code != apperr.CodeSlowConsumer {
		t.Fatalf("next after the queue: %v, want SLOW_CONSUMER", err)
	}
	// A stream that keeps up is not touched.
	if fmt.Sprint(got) != fmt.Sprint(seq("a", 5)) {
		t.Fatalf("the stream that keeps up got %v", got)
	}
	if n := f.hub.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers, want 1", n)
	}
}

func TestStreamsPerKey(t *testing.T) {
	f := newFeed(t, events.Options{PerKey: 2})
	alice, bob := as(f.env.Alice, viewer.RoleUser), as(f.env.Bob, viewer.RoleUser)
	first := f.subscribe(alice, events.Filter{})
	f.subscribe(alice, events.Filter{})
	_, err := f.hub.Subscribe(context.Background(), alice, events.Filter{})
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeRateLimited {
		t.Fatalf("third stream of a key: %v, want RATE_LIMITED", err)
	}
	// Another key is not counted with it.
	f.subscribe(bob, events.Filter{})
	// Closing one frees its place.
	first.Close()
	f.subscribe(alice, events.Filter{})
}

func TestShutdown(t *testing.T) {
	f := newFeed(t, events.Options{})
	alice := as(f.env.Alice, viewer.RoleUser)
	s := f.subscribe(alice, events.Filter{})
	f.stop()
	select {
	case <-f.done:
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, events.ErrShutdown) {
		t.Fatalf("open stream: %v, want ErrShutdown", err)
	}
	if _, err := f.hub.Subscribe(context.Background(), alice, events.Filter{}); !errors.Is(err, events.ErrShutdown) {
		t.Fatalf("new stream: %v, want ErrShutdown", err)
	}
}

func TestLingerBatches(t *testing.T) {
	const interval = 2 * time.Second
	f := newFeed(t, events.Options{FlushInterval: interval})
	env := f.env
	s := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{})
	ctx := context.Background()

	f.create(env.Alice, "a0")
	next(t, s)
	start := time.Now()
	s.Linger(ctx) // the first batch after a quiet spell goes out at once
	if d := time.Since(start); d >= interval {
		t.Fatalf("the first batch was held %s", d)
	}
	noMore(t, s)

	// Four events in one read: the writer wakes on the first and, held
	// until the flush deadline, takes the rest with it.
	f.create(env.Alice, "a1", "a2", "a3", "a4")
	next(t, s)
	s.Linger(ctx)
	if d := time.Since(start); d < interval {
		t.Fatalf("the second batch came %s after the first, before the flush interval %s", d, interval)
	}
	var got []string
	for ev, ok := s.TryNext(); ok; ev, ok = s.TryNext() {
		got = append(got, itemName(ev))
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"a2", "a3", "a4"}) {
		t.Fatalf("batch after linger: %v", got)
	}

	// A stream that ends is not held.
	f.create(env.Alice, "a5")
	next(t, s)
	done := make(chan struct{})
	go func() { defer close(done); s.Linger(ctx) }()
	s.Close()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Linger held a closed stream")
	}
}

// TestReauthorize: a stream delivers what its viewer may see now. Events
// queued for an admin's stream before a demotion are not handed out after
// it, later ones reach it only if they are the user's own, and a promotion
// widens it again (the old code kept the role the stream opened with).
func TestReauthorize(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	s := f.subscribe(as(env.Alice, viewer.RoleAdmin), events.Filter{})
	f.create(env.Bob, "queued") // fanned out to the admin's stream...
	if !testutil.Eventually(t, wait, func() bool {
		f.hub.Notify()
		return f.hub.Subscribers() == 1 && queued(s)
	}) {
		t.Fatal("the event never reached the stream's queue")
	}
	s.Reauthorize(as(env.Alice, viewer.RoleUser)) // ...then the viewer is demoted
	f.create(env.Bob, "other")
	f.create(env.Alice, "own")
	if got := names(t, s, 1); got[0] != "own" {
		t.Fatalf("after the demotion: %v, want [own]", got)
	}
	noMore(t, s)
	s.Reauthorize(as(env.Alice, viewer.RoleAdmin))
	f.create(env.Bob, "again")
	if got := names(t, s, 1); got[0] != "again" {
		t.Fatalf("after the promotion: %v, want [again]", got)
	}
}

// queued reports whether a live event waits for s, without taking it.
func queued(s *events.Subscription) bool { return events.Queued(s) > 0 }

// TestRecheck: once the hub is told a key changed, its streams hand out no
// further event before their owner checked the credential again
// (ErrCheck), and another key's streams are not asked.
func TestRecheck(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	alice := f.subscribe(as(env.Alice, viewer.RoleUser), events.Filter{})
	bob := f.subscribe(as(env.Bob, viewer.RoleUser), events.Filter{})
	f.create(env.Alice, "a")
	f.create(env.Bob, "b")
	f.hub.Recheck(env.Alice.KeyID)
	if _, ok := alice.TryNext(); ok {
		t.Fatal("TryNext handed out an event while a check was due")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := alice.Next(ctx); !errors.Is(err, events.ErrCheck) {
		t.Fatalf("Next: %v, want ErrCheck", err)
	}
	if got := names(t, alice, 1); got[0] != "a" {
		t.Fatalf("after the check: %v", got)
	}
	if got := names(t, bob, 1); got[0] != "b" {
		t.Fatalf("another key's stream: %v", got)
	}
}
