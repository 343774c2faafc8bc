package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestEventFrame: an event's Server-Sent Events frame, whether the tailer
// rendered it for every stream (live) or the stream renders it itself
// (replayed): its id is the cursor, its name the type, its data the body
// webhooks carry, timestamp in UTC.
func TestEventFrame(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	alice := as(env.Alice, viewer.RoleUser)
	live := f.subscribe(alice, events.Filter{})
	f.create(env.Alice, "first", "second")
	cursor := next(t, live)
	second := next(t, live)
	id := env.CreateItem(env.Alice, "gone")
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	f.hub.Notify()
	next(t, live)
	deleted := next(t, live)
	replayed := next(t, f.subscribe(alice, events.Filter{After: cursor.Position()}))

	cases := []struct {
		name     string
		ev       events.Event
		rendered bool // by the tailer, once for every stream
		typ      string
		item     string
	}{
		{"live", second, true, "item.created", "second"},
		{"live, item deleted", deleted, true, "item.deleted", "gone"},
		{"replayed", replayed, false, "item.created", "second"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.ev.Frame != nil) != c.rendered {
				t.Fatalf("frame rendered by the tailer: %v, want %v", c.ev.Frame != nil, c.rendered)
			}
			frame, err := c.ev.SSEFrame()
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(string(frame), "\n", 4)
			if len(lines) != 4 || lines[0] != "id: "+c.ev.ID || lines[1] != "event: "+c.typ ||
				!strings.HasPrefix(lines[2], "data: ") || lines[3] != "\n" {
				t.Fatalf("frame %q", frame)
			}
			var body struct {
				ID, Event string
				Data      struct{ Name string }
				Timestamp string
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &body); err != nil {
				t.Fatalf("data: %v", err)
			}
			if body.ID != c.ev.ID || body.Event != c.typ || body.Data.Name != c.item || !strings.HasSuffix(body.Timestamp, "Z") {
				t.Errorf("data %+v", body)
			}
			if b, _ := json.Marshal(c.ev.Body()); !bytes.Equal(b, []byte(strings.TrimPrefix(lines[2], "data: "))) {
				t.Errorf("data is not the body: %s", b)
			}
			afresh := c.ev
			afresh.Frame = nil
			if again, _ := afresh.SSEFrame(); !bytes.Equal(again, frame) {
				t.Errorf("rendered afresh %q, want %q", again, frame)
			}
		})
	}
}

// TestReplayFilter: a resumed stream replays what its viewer may see of the
// types it asked for, as the live feed hands them out, then goes on live.
func TestReplayFilter(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	admin := f.subscribe(as(env.Admin, viewer.RoleAdmin), events.Filter{})
	f.create(env.Admin, "cursor")
	cursor := next(t, admin).Position()
	id := env.CreateItem(env.Alice, "a0")
	env.CreateItem(env.Bob, "b0")
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	f.hub.Notify()
	names(t, admin, 3) // every event up to here is published

	cases := []struct {
		name  string
		v     viewer.Viewer
		types []string
		want  string // replayed, then the live a1 if it is theirs
	}{
		{"owner", as(env.Alice, viewer.RoleUser), nil, "item.created:a0 item.deleted:a0 item.created:a1"},
		{"owner, deletions only", as(env.Alice, viewer.RoleUser), []string{"item.deleted"}, "item.deleted:a0"},
		{"another user", as(env.Bob, viewer.RoleUser), nil, "item.created:b0"},
		{"admin", as(env.Admin, viewer.RoleAdmin), nil, "item.created:a0 item.created:b0 item.deleted:a0 item.created:a1"},
	}
	streams := make([]*events.Subscription, len(cases))
	for i, c := range cases {
		streams[i] = f.subscribe(c.v, events.Filter{Types: c.types, After: cursor})
	}
	f.create(env.Alice, "a1")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for range strings.Fields(c.want) {
				ev := next(t, streams[i])
				got = append(got, ev.Type+":"+itemName(ev))
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("got %v, want %s", got, c.want)
			}
			noMore(t, streams[i])
		})
	}
}

// TestNextEnds: one row per way a wait for the next event ends other than
// with an event, and what NextOrCheck returns for it.
func TestNextEnds(t *testing.T) {
	f := newFeed(t, events.Options{})
	alice := as(f.env.Alice, viewer.RoleUser)
	fired := func() <-chan time.Time {
		c := make(chan time.Time, 1)
		c <- time.Now()
		return c
	}
	cases := []struct {
		name string
		// end ends the wait: it returns the channels NextOrCheck gets and
		// may cancel its context or close the stream.
		end  func(s *events.Subscription, cancel context.CancelFunc) (check, idle <-chan time.Time)
		want func(error) bool
	}{
		{"a check is due (the caller rechecks the token)", func(*events.Subscription, context.CancelFunc) (<-chan time.Time, <-chan time.Time) {
			return fired(), nil
		}, func(err error) bool { return errors.Is(err, events.ErrCheck) }},
		{"idle (the caller sends a keep-alive)", func(*events.Subscription, context.CancelFunc) (<-chan time.Time, <-chan time.Time) {
			return nil, fired()
		}, func(err error) bool { return errors.Is(err, events.ErrIdle) }},
		{"the request ends", func(_ *events.Subscription, cancel context.CancelFunc) (<-chan time.Time, <-chan time.Time) {
			cancel()
			return nil, nil
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"closed by its owner", func(s *events.Subscription, _ context.CancelFunc) (<-chan time.Time, <-chan time.Time) {
			s.Close()
			return nil, nil
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := f.subscribe(alice, events.Filter{})
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			check, idle := c.end(s, cancel)
			if _, err := s.NextOrCheck(ctx, check, idle); !c.want(err) {
				t.Fatalf("NextOrCheck: %v", err)
			}
			select {
			case <-s.Ended():
				if s.Err() != nil {
					t.Errorf("Err() = %v after an end its owner chose", s.Err())
				}
			default:
			}
		})
	}
}

// TestTryNext: TryNext never waits: nothing is at hand before a resumed
// stream has read the outbox, the rest of a replayed page is, and so are
// live events queued, in order, until none is left.
func TestTryNext(t *testing.T) {
	f := newFeed(t, events.Options{FlushInterval: -1})
	env := f.env
	alice := as(env.Alice, viewer.RoleUser)
	live := f.subscribe(alice, events.Filter{})
	f.create(env.Alice, "a0", "a1", "a2")
	cursor := next(t, live).Position()
	if got := fmt.Sprint(names(t, live, 2)); got != "[a1 a2]" {
		t.Fatalf("live: %s", got)
	}

	resumed := f.subscribe(alice, events.Filter{After: cursor})
	if ev, ok := resumed.TryNext(); ok {
		t.Fatalf("an event at hand before the replay read the outbox: %s", itemName(ev))
	}
	if got := itemName(next(t, resumed)); got != "a1" {
		t.Fatalf("replayed %s first", got)
	}
	if ev, ok := resumed.TryNext(); !ok || itemName(ev) != "a2" {
		t.Fatalf("the rest of the replayed page: %v %s", ok, itemName(ev))
	}

	// Once another stream has both, the tailer has queued both for this one.
	witness := f.subscribe(alice, events.Filter{})
	f.create(env.Alice, "a3", "a4")
	names(t, witness, 2)
	if got := itemName(next(t, live)); got != "a3" {
		t.Fatalf("live %s", got)
	}
	if ev, ok := live.TryNext(); !ok || itemName(ev) != "a4" {
		t.Fatalf("the live event queued with it: %v %s", ok, itemName(ev))
	}
	noMore(t, live)
}

// TestCloseTwice: closing a stream again gives its key's place back once.
func TestCloseTwice(t *testing.T) {
	f := newFeed(t, events.Options{PerKey: 2})
	alice := as(f.env.Alice, viewer.RoleUser)
	first := f.subscribe(alice, events.Filter{})
	f.subscribe(alice, events.Filter{})
	first.Close()
	first.Close()
	f.subscribe(alice, events.Filter{})
	_, err := f.hub.Subscribe(context.Background(), alice, events.Filter{})
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeRateLimited {
		t.Fatalf("a third open stream of the key: %v, want RATE_LIMITED", err)
	}
	if n := f.hub.Subscribers(); n != 2 {
		t.Fatalf("%d subscribers, want 2", n)
	}
}
