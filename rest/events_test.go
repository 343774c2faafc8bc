package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// eventRow is an event as the feed renders it.
type eventRow struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Data  struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		UserID string `json:"user_id"`
	} `json:"data"`
}

// listEvents reads GET path as actor and returns the events.
func listEvents(t *testing.T, env *testutil.Env, token, path string) ([]eventRow, *string) {
	t.Helper()
	r := env.Do(testutil.Request{Method: "GET", Path: path, Token: token})
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var body struct {
		Data []eventRow
		Meta struct {
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Data, body.Meta.Pagination.NextCursor
}

func types(evs []eventRow) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Event+":"+e.Data.Name)
	}
	return strings.Join(s, ",")
}

// TestEventFeed: GET /v1/events and /v1/events/{id}, one row per contract
// case: privacy, order, filters, cursors, refusals.
func TestEventFeed(t *testing.T) {
	env := testutil.New(t)
	a := env.CreateItem(env.Alice, "a")
	env.CreateItem(env.Bob, "b")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + a, Token: env.Alice.Token, Body: map[string]any{"name": "a2"}}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + a, Token: env.Alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	env.WaitPublished()
	alice, _ := listEvents(t, env, env.Alice.Token, "/v1/events")
	if got, want := types(alice), "item.deleted:a2,item.updated:a2,item.created:a"; got != want {
		t.Fatalf("alice's feed = %s, want %s", got, want)
	}
	created, deleted := alice[2].ID, alice[0].ID
	bob, _ := listEvents(t, env, env.Bob.Token, "/v1/events")
	if len(bob) != 1 {
		t.Fatalf("bob's feed = %s", types(bob))
	}

	cases := []struct {
		name, path, token string
		status            int
		code, want        string
	}{
		{"own events newest first", "/v1/events", env.Alice.Token, 200, "", "item.deleted:a2,item.updated:a2,item.created:a"},
		{"admin sees all", "/v1/events", env.Admin.Token, 200, "", "item.deleted:a2,item.updated:a2,item.created:b,item.created:a"},
		{"type filter", "/v1/events?type=item.created,item.deleted", env.Alice.Token, 200, "", "item.deleted:a2,item.created:a"},
		{"after", "/v1/events?after=" + created, env.Alice.Token, 200, "", "item.deleted:a2,item.updated:a2"},
		{"after the last", "/v1/events?after=" + deleted, env.Alice.Token, 200, "", ""},
		{"first page", "/v1/events?limit=2", env.Alice.Token, 200, "", "item.deleted:a2,item.updated:a2"},
		{"unknown type", "/v1/events?type=item.moved", env.Alice.Token, 400, "VALIDATION_ERROR", ""},
		{"after not an event id", "/v1/events?after=item_x", env.Alice.Token, 400, "VALIDATION_ERROR", ""},
		{"after another user's event", "/v1/events?after=" + bob[0].ID, env.Alice.Token, 400, "VALIDATION_ERROR", ""},
		{"limit out of range", "/v1/events?limit=0", env.Alice.Token, 400, "VALIDATION_ERROR", ""},
		{"anonymous", "/v1/events", "", 401, "UNAUTHORIZED", ""},
		{"one event", "/v1/events/" + deleted, env.Alice.Token, 200, "", ""},
		{"deleted item's event, as admin", "/v1/events/" + deleted, env.Admin.Token, 200, "", ""},
		{"another user's event", "/v1/events/" + bob[0].ID, env.Alice.Token, 404, "NOT_FOUND", ""},
		{"not an event id", "/v1/events/nope", env.Alice.Token, 404, "NOT_FOUND", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(testutil.Request{Method: "GET", Path: c.path, Token: c.token})
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Fatalf("%d %s, want %d %s: %s", r.Status, r.ErrorCode(), c.status, c.code, r.Body)
			}
			if c.status == 200 && strings.HasPrefix(c.path, "/v1/events?") || c.path == "/v1/events" && c.status == 200 {
				evs, _ := listEvents(t, env, c.token, c.path)
				if got := types(evs); got != c.want {
					t.Errorf("events = %s, want %s", got, c.want)
				}
			}
		})
	}

	t.Run("cursor pages", func(t *testing.T) {
		var all []eventRow
		path := "/v1/events?limit=1"
		for range 10 {
			page, next := listEvents(t, env, env.Admin.Token, path)
			all = append(all, page...)
			if next == nil {
				break
			}
			path = "/v1/events?limit=1&cursor=" + *next
		}
		if got, want := types(all), "item.deleted:a2,item.updated:a2,item.created:b,item.created:a"; got != want {
			t.Fatalf("paged = %s, want %s", got, want)
		}
	})
}

// sseEvent is one event of a stream.
type sseEvent struct {
	ID, Event, Data string
}

// sseClient reads a Server-Sent Events stream, as EventSource would.
type sseClient struct {
	resp   *http.Response
	events chan sseEvent
	done   chan struct{}
	opened chan struct{} // closed at the stream's first frame (retry)
	err    error         // why the body ended (nil: its last chunk came), once done
}

// openStream opens GET /v1/events/stream on srv; a non-200 answer is
// returned as the response with no events.
func openStream(t *testing.T, srv *httptest.Server, token, lastID, query string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/events/stream"+query, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &sseClient{resp: resp, events: make(chan sseEvent, 1000), done: make(chan struct{}), opened: make(chan struct{})}
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-c.done })
	go func() {
		defer close(c.done)
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "retry: "):
				close(c.opened)
			case line == "":
				if ev.Event != "" {
					c.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
		c.err = sc.Err()
	}()
	return c
}

// next waits for the next event of the stream.
func (c *sseClient) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			t.Fatal("stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sseEvent{}
}

// name is the item name in an event's data.
func (e sseEvent) name(t *testing.T) string {
	t.Helper()
	var row eventRow
	if err := json.Unmarshal([]byte(e.Data), &row); err != nil {
		t.Fatalf("event data %q: %v", e.Data, err)
	}
	return e.Event + ":" + row.Data.Name
}

// streamEnv is a test server with its workers (the event tailer) running,
// served over real HTTP.
func streamEnv(t *testing.T, opts ...testutil.Option) (*testutil.Env, *httptest.Server) {
	t.Helper()
	env := testutil.New(t, opts...)
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	return env, srv
}

// TestEventStream: the SSE feed delivers the caller's created, updated and
// deleted events live, never another user's, and resumes after the last id
// with exactly the events missed.
func TestEventStream(t *testing.T) {
	env, srv := streamEnv(t)
	s := openStream(t, srv, env.Alice.Token, "", "")
	if s.resp.StatusCode != 200 || !strings.HasPrefix(s.resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", s.resp.StatusCode, s.resp.Header.Get("Content-Type"))
	}
	a := env.CreateItem(env.Alice, "a")
	env.CreateItem(env.Bob, "b") // never reaches Alice
	env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + a, Token: env.Alice.Token, Body: map[string]any{"name": "a2"}})
	env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + a, Token: env.Alice.Token})
	var got []string
	var last string
	for range 3 {
		ev := s.next(t)
		got = append(got, ev.name(t))
		last = ev.ID
	}
	if want := "item.created:a,item.updated:a2,item.deleted:a2"; strings.Join(got, ",") != want {
		t.Fatalf("live = %v, want %s", got, want)
	}
	// A change of Alice's after Bob's: had Bob's reached her, it would
	// come before this one.
	env.CreateItem(env.Alice, "c")
	if ev := s.next(t); ev.name(t) != "item.created:c" {
		t.Fatalf("after another user's change got %s", ev.name(t))
	}

	// Killed after the update: resuming replays what followed, once.
	all, _ := listEvents(t, env, env.Alice.Token, "/v1/events")
	// all: created:c, deleted, updated, created:a (newest first)
	r := openStream(t, srv, env.Alice.Token, all[2].ID, "")
	for _, want := range []string{"item.deleted:a2", "item.created:c"} {
		if ev := r.next(t); ev.name(t) != want {
			t.Fatalf("resumed: got %s, want %s", ev.name(t), want)
		}
	}
	env.CreateItem(env.Alice, "d")
	if ev := r.next(t); ev.name(t) != "item.created:d" {
		t.Fatalf("resumed then live: got %s", ev.name(t))
	}
	_ = last

	t.Run("type filter and after, by query (EventSource cannot send headers)", func(t *testing.T) {
		q := "?type=item.deleted&after=" + all[3].ID + "&access_token=" + env.Alice.Token
		f := openStream(t, srv, "", "", q)
		if ev := f.next(t); ev.name(t) != "item.deleted:a2" {
			t.Fatalf("got %s", ev.name(t))
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, c := range []struct {
			name, token, last, query string
			status                   int
		}{
			{"anonymous", "", "", "", 401},
			{"bad token", "nope", "", "", 401},
			{"unknown type", env.Alice.Token, "", "?type=x", 400},
			{"another user's event id", env.Bob.Token, all[0].ID, "", 400},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := openStream(t, srv, c.token, c.last, c.query)
				if s.resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d", s.resp.StatusCode, c.status)
				}
			})
		}
	})
}

// TestEventStreamConcurrentWriters: events committed by concurrent writers
// reach a live stream exactly once, in commit (seq) order, and a stream
// resumed from any event gets exactly the ones after it.
func TestEventStreamConcurrentWriters(t *testing.T) {
	env, srv := streamEnv(t)
	live := openStream(t, srv, env.Admin.Token, "", "")
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				env.CreateItem(env.Alice, fmt.Sprintf("w%d-%d", w, i))
			}
		}()
	}
	wg.Wait()
	var ids []string
	seen := map[string]bool{}
	for range writers * each {
		ev := live.next(t)
		if seen[ev.ID] {
			t.Fatalf("event %s twice", ev.ID)
		}
		seen[ev.ID] = true
		ids = append(ids, ev.ID)
	}
	// The feed's commit order, oldest first.
	var feed []string
	path := "/v1/events?limit=100"
	for {
		page, next := listEvents(t, env, env.Admin.Token, path)
		for _, e := range page {
			feed = append([]string{e.ID}, feed...)
		}
		if next == nil {
			break
		}
		path = "/v1/events?limit=100&cursor=" + *next
	}
	if strings.Join(feed, ",") != strings.Join(ids, ",") {
		t.Fatalf("live order differs from the feed's commit order:\nlive %v\nfeed %v", ids, feed)
	}
	for _, from := range []int{0, len(ids) / 2, len(ids) - 2} {
		r := openStream(t, srv, env.Admin.Token, ids[from], "")
		for _, want := range ids[from+1:] {
			if ev := r.next(t); ev.ID != want {
				t.Fatalf("resumed after %d: got %s, want %s", from, ev.ID, want)
			}
		}
	}
}

// TestEventStreamEnds: a stream ends with an error event carrying the code
// when its key is revoked, when its client is too slow, and when the server
// stops.
func TestEventStreamEnds(t *testing.T) {
	t.Run("revoked key", func(t *testing.T) {
		env, srv := streamEnv(t, testutil.WithAppOptions(func(o *app.Options) {
			o.Service.StreamRecheck = 20 * time.Millisecond
			o.Service.KeyRecheck = time.Millisecond
		}))
		s := openStream(t, srv, env.Alice.Token, "", "")
		if _, err := env.App.Service.RevokeKey(context.Background(), env.Alice.KeyID); err != nil {
			t.Fatal(err)
		}
		ev := s.next(t)
		if ev.Event != "error" || !strings.Contains(ev.Data, `"UNAUTHORIZED"`) {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("outlives REQUEST_TIMEOUT", func(t *testing.T) {
		const timeout = 50 * time.Millisecond
		env, srv := streamEnv(t, testutil.WithConfig(func(c *config.Config) { c.RequestTimeout = timeout }))
		// Each query of a stream keeps REQUEST_TIMEOUT, and on a busy
		// machine opening one (a new PostgreSQL connection, then a read of
		// the outbox) may take longer than this one: the 503 UNAVAILABLE a
		// client retries, not what is tested here.
		var s *sseClient
		testutil.Eventually(t, 10*time.Second, func() bool {
			s = openStream(t, srv, env.Alice.Token, "", "")
			return s.resp.StatusCode != http.StatusServiceUnavailable
		})
		if s.resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", s.resp.StatusCode)
		}
		<-time.After(3 * timeout) // the property under test is time passing
		// Through the service, with no deadline: over HTTP the create
		// would have the tight one too.
		createItem(t, env, env.Alice, "late")
		if ev := s.next(t); ev.name(t) != "item.created:late" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		// Checked at the token's expiry, not only every StreamRecheck.
		env, srv := streamEnv(t, testutil.WithConfig(func(c *config.Config) { c.TokenTTL = 2 * time.Second }))
		s := openStream(t, srv, env.Alice.Token, "", "")
		if s.resp.StatusCode != 200 {
			t.Fatalf("stream: %d", s.resp.StatusCode)
		}
		ev := s.next(t)
		if ev.Event != "error" || !strings.Contains(ev.Data, `"TOKEN_EXPIRED"`) {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("slow consumer", func(t *testing.T) {
		env, _ := streamEnv(t, testutil.WithConfig(func(c *config.Config) { c.EventStreamBuffer = 2 }))
		// The hub alone: a client that does not read while events arrive.
		st := subscribe(t, env, env.Alice)
		for i := range 5 {
			env.CreateItem(env.Alice, fmt.Sprintf("x%d", i))
		}
		select {
		case <-st.Ended():
		case <-time.After(10 * time.Second):
			t.Fatal("not dropped")
		}
		var err error
		for err == nil {
			_, err = st.Next(context.Background())
		}
		if !strings.Contains(err.Error(), "SLOW_CONSUMER") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("server stops", func(t *testing.T) {
		env, srv := streamEnv(t)
		s := openStream(t, srv, env.Alice.Token, "", "")
		env.App.Close()
		ev := s.next(t)
		if ev.Event != "error" || !strings.Contains(ev.Data, `"UNAVAILABLE"`) {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("streams per key", func(t *testing.T) {
		env, srv := streamEnv(t, testutil.WithConfig(func(c *config.Config) { c.EventStreamsPerKey = 1 }))
		openStream(t, srv, env.Alice.Token, "", "")
		if s := openStream(t, srv, env.Alice.Token, "", ""); s.resp.StatusCode != 429 {
			t.Fatalf("second stream: %d", s.resp.StatusCode)
		}
		if s := openStream(t, srv, env.Bob.Token, "", ""); s.resp.StatusCode != 200 {
			t.Fatalf("another key's stream: %d", s.resp.StatusCode)
		}
	})
}

// createItem creates an item as the actor through the service, outside any
// request and its deadline.
func createItem(t *testing.T, env *testutil.Env, as testutil.Actor, name string) {
	t.Helper()
	v, err := env.App.Service.Authenticate(context.Background(), as.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.CreateItem(viewer.NewContext(context.Background(), v), ent.CreateItemInput{Name: name}); err != nil {
		t.Fatalf("create item: %v", err)
	}
}

// subscribe opens a stream through the service, as a transport would.
func subscribe(t *testing.T, env *testutil.Env, as testutil.Actor) *service.Stream {
	t.Helper()
	v, err := env.App.Service.Authenticate(context.Background(), as.Token)
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.App.Service.SubscribeEvents(viewer.NewContext(context.Background(), v), service.StreamParams{Token: as.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// TestEventStreamAfterIdle: the tailer reads nothing while no stream is
// open; a stream opened after writes made meanwhile starts at the end of the
// outbox as it is then (none of the earlier events comes live), and one
// resumed across such a pause gets exactly what it missed, then live events.
func TestEventStreamAfterIdle(t *testing.T) {
	env, srv := streamEnv(t)
	env.CreateItem(env.Alice, "before any stream")
	env.WaitPublished() // a stream from now must not get it
	first := openStream(t, srv, env.Alice.Token, "", "")
	env.CreateItem(env.Alice, "a")
	ev := first.next(t)
	if ev.name(t) != "item.created:a" {
		t.Fatalf("first stream got %s", ev.name(t))
	}
	first.resp.Body.Close()
	waitSubscribers(t, env, 0)

	env.CreateItem(env.Alice, "b") // while no stream is open
	env.CreateItem(env.Alice, "c")
	env.WaitPublished()
	now := openStream(t, srv, env.Alice.Token, "", "")
	waitSubscribers(t, env, 1)
	env.CreateItem(env.Alice, "d")
	if got := now.next(t); got.name(t) != "item.created:d" {
		t.Fatalf("a stream from now got %s first, want item.created:d", got.name(t))
	}
	now.resp.Body.Close()
	waitSubscribers(t, env, 0)

	env.CreateItem(env.Alice, "e")
	resumed := openStream(t, srv, env.Alice.Token, ev.ID, "")
	for _, want := range []string{"item.created:b", "item.created:c", "item.created:d", "item.created:e"} {
		if got := resumed.next(t); got.name(t) != want {
			t.Fatalf("resumed: got %s, want %s", got.name(t), want)
		}
	}
	env.CreateItem(env.Alice, "f")
	if got := resumed.next(t); got.name(t) != "item.created:f" {
		t.Fatalf("resumed then live: got %s", got.name(t))
	}
}

// waitSubscribers waits until the hub has n streams registered.
func waitSubscribers(t *testing.T, env *testutil.Env, n int) {
	t.Helper()
	if !testutil.Eventually(t, 10*time.Second, func() bool { return env.App.Events.Subscribers() == n }) {
		t.Fatalf("%d streams registered, want %d", env.App.Events.Subscribers(), n)
	}
}
