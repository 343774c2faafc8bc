package retention_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/deliveryattempt"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// retention is EVENT_RETENTION in these tests: the default.
const retention = 720 * time.Hour

// clock is the pruner's and the feeds' clock: the real one until set, then
// fixed where the test puts it. Event ids carry the real time they were
// made, so a test makes its "old" events, marks a boundary, makes its
// "recent" ones, and then sets the clock to boundary+EVENT_RETENTION:
// the window starts at the boundary, and nothing waits for days to pass.
type clock struct{ fixed atomic.Int64 }

func (c *clock) now() time.Time {
	if ns := c.fixed.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

func (c *clock) set(t time.Time) { c.fixed.Store(t.UnixNano()) }

// boundary returns a time strictly between the events made before it and
// those made after it, to the millisecond of their ids (ULID time): it
// lets the clock move past a few milliseconds. (No observable thing marks
// the passing of a millisecond; this is not a wait for one.)
func boundary() time.Time {
	time.Sleep(5 * time.Millisecond)
	b := time.Now()
	time.Sleep(5 * time.Millisecond)
	return b
}

// sys acts as the system, past privacy, for assertions on the tables.
func sys() context.Context {
	return privacy.DecisionContext(context.Background(), privacy.Allow)
}

// newEnv is a server whose pruner runs on c, with small batches (so a pass
// takes several) and a margin of a millisecond, and whose dispatcher
// delivers to local receivers quickly: one retry, soon after.
func newEnv(t *testing.T, c *clock) *testutil.Env {
	t.Helper()
	return testutil.New(t, func(cfg *config.Config, o *app.Options) {
		cfg.EventRetention = retention
		cfg.WebhookAllowPrivate = true
		cfg.WebhookRetrySchedule = []time.Duration{20 * time.Millisecond}
		o.Retention.Window.Now = c.now
		o.Retention.Batch = 2
		o.Retention.Pause = time.Millisecond
		o.Retention.Margin = time.Millisecond
		o.Retention.Every = time.Hour
		o.Webhooks.PollInterval = 10 * time.Millisecond
		o.Webhooks.Jitter = func(d time.Duration) time.Duration { return d }
		o.Webhooks.DrainTimeout = 100 * time.Millisecond
		o.Webhooks.BreakerThreshold = 100 // the failing receiver never trips it
	})
}

// receiver is a webhook endpoint's server answering status; got counts the
// deliveries of each event id.
type receiver struct {
	*httptest.Server
	status int
	got    chan string
}

func newReceiver(t *testing.T, status int) *receiver {
	rc := &receiver{status: status, got: make(chan string, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.got <- r.Header.Get("webhook-id")
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// register creates an endpoint of Alice's for url and the given event types.
func register(t *testing.T, env *testutil.Env, url string, events ...string) string {
	t.Helper()
	body := map[string]any{"url": url}
	if events != nil {
		body["events"] = events
	}
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token, Body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("register webhook: %d %s", r.Status, r.Body)
	}
	var ep struct{ ID string }
	r.Data(t, &ep)
	return ep.ID
}

// settled waits until the deliveries of the endpoint reach the states.
func settled(t *testing.T, c *ent.Client, endpoint string, want map[delivery.State]int) {
	t.Helper()
	count := func() map[delivery.State]int {
		got := map[delivery.State]int{}
		ds, err := c.Delivery.Query().Where(delivery.EndpointID(endpoint)).All(sys())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			got[d.State]++
		}
		return got
	}
	same := func() bool {
		got := count()
		for s, n := range want {
			if got[s] != n {
				return false
			}
		}
		return len(got) == len(want)
	}
	if !testutil.Eventually(t, 10*time.Second, same) {
		t.Fatalf("deliveries of %s: %v, want %v", endpoint, count(), want)
	}
}

// eventIDs are the ids of Alice's events, oldest first, as the feed lists them.
func eventIDs(t *testing.T, env *testutil.Env, want int) []string {
	t.Helper()
	var ids []string
	// On PostgreSQL the feed lists an event once every transaction older
	// than its own has ended (events.Published), and another package's
	// tests may hold one open on the same database for a while: look
	// again until the feed shows the events the test committed.
	testutil.Eventually(t, 30*time.Second, func() bool {
		r := env.Do(testutil.Request{Method: "GET", Path: "/v1/events?limit=100", Token: env.Alice.Token})
		var page []struct{ ID string }
		r.Data(t, &page)
		ids = make([]string, len(page))
		for i, e := range page {
			ids[len(page)-1-i] = e.ID
		}
		return len(ids) == want
	})
	return ids
}

// TestPrune: a pass deletes the events older than EVENT_RETENTION with
// their finished (succeeded, failed) deliveries and those deliveries'
// attempts, in batches; keeps recent events, and an old event still owed
// to a paused endpoint, until the endpoint is active again and has it;
// counts what it deleted, and the age of the oldest event kept, on /metrics.
func TestPrune(t *testing.T) {
	var c clock
	env := newEnv(t, &c)
	db := env.App.DB.Client
	ok := newReceiver(t, http.StatusNoContent)
	failing := newReceiver(t, http.StatusInternalServerError)
	held := newReceiver(t, http.StatusNoContent)
	okID := register(t, env, ok.URL)
	failingID := register(t, env, failing.URL)
	heldID := register(t, env, held.URL, "item.updated")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + heldID, Token: env.Alice.Token,
		Body: map[string]any{"active": false}}); r.Status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	env.App.Start(context.Background())

	// Old: two item.created (owed to nobody once delivered) and one
	// item.updated, owed to the paused endpoint.
	first := env.CreateItem(env.Alice, "first")
	env.CreateItem(env.Alice, "second")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + first, Token: env.Alice.Token,
		Body: map[string]any{"name": "first, renamed"}}); r.Status != http.StatusOK {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	settled(t, db, okID, map[delivery.State]int{delivery.StateSucceeded: 3})
	settled(t, db, failingID, map[delivery.State]int{delivery.StateFailed: 3})
	settled(t, db, heldID, map[delivery.State]int{delivery.StatePending: 1})
	old := eventIDs(t, env, 3)
	if len(old) != 3 {
		t.Fatalf("old events: %v", old)
	}
	b := boundary()
	env.CreateItem(env.Alice, "recent")
	settled(t, db, okID, map[delivery.State]int{delivery.StateSucceeded: 4})
	settled(t, db, failingID, map[delivery.State]int{delivery.StateFailed: 4})
	all := eventIDs(t, env, 4)
	if len(all) != 4 {
		t.Fatalf("events: %v", all)
	}
	recentEvent := all[3]
	c.set(b.Add(retention))

	if _, err := env.App.Retention.Prune(context.Background()); err != nil {
		t.Fatalf("prune: %v", err)
	}
	exists := func(id string) bool {
		n, err := db.Event.Query().Where(event.ID(id)).Count(sys())
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for _, tt := range []struct {
		name string
		id   string
		kept bool
	}{
		{"old item.created, delivered", old[0], false},
		{"old item.created, failed", old[1], false},
		{"old item.updated, owed to the paused endpoint", old[2], true},
		{"recent", recentEvent, true},
	} {
		if got := exists(tt.id); got != tt.kept {
			t.Errorf("%s: kept %v, want %v", tt.name, got, tt.kept)
		}
	}
	// Old events' finished deliveries are gone with their attempts (even
	// the owed event's, to the other endpoints); the recent event's and the
	// pending one stay.
	left, err := db.Delivery.Query().WithAttemptLog().All(sys())
	if err != nil {
		t.Fatal(err)
	}
	var recentDeliveries, pending int
	for _, d := range left {
		switch {
		case d.EventID == recentEvent:
			recentDeliveries++
		case d.EventID == old[2] && d.EndpointID == heldID && d.State == delivery.StatePending:
			pending++
		default:
			t.Errorf("delivery %s of %s (%s) to %s not pruned", d.ID, d.EventID, d.State, d.EndpointID)
		}
	}
	if recentDeliveries != 2 || pending != 1 {
		t.Errorf("kept %d deliveries of the recent event and %d pending, want 2 and 1", recentDeliveries, pending)
	}
	if n, err := db.DeliveryAttempt.Query().Count(sys()); err != nil || n != 1+2 {
		t.Errorf("attempts left: %d (%v), want the recent event's 3", n, err)
	}
	m := env.Scrape()
	age := m.Value("itemsvc_event_oldest_age_seconds", nil)
	if age < retention.Seconds() {
		t.Errorf("oldest event's age %gs, want at least EVENT_RETENTION: the owed event is older", age)
	}
	// The feed lists only the window, not the event kept for the webhook.
	if got := eventIDs(t, env, 1); len(got) != 1 || got[0] != recentEvent {
		t.Errorf("feed after pruning: %v, want only %s", got, recentEvent)
	}

	// Resumed, the endpoint gets the event it was owed; then it goes too.
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + heldID, Token: env.Alice.Token,
		Body: map[string]any{"active": true}}); r.Status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	select {
	case id := <-held.got:
		if id != old[2] {
			t.Errorf("the resumed endpoint got %s, want the owed %s", id, old[2])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed endpoint never got the event it was owed")
	}
	settled(t, db, heldID, map[delivery.State]int{delivery.StateSucceeded: 1})
	if _, err := env.App.Retention.Prune(context.Background()); err != nil {
		t.Fatalf("prune: %v", err)
	}
	if exists(old[2]) {
		t.Error("the owed event outlived its delivery")
	}
	if n, err := db.Delivery.Query().Where(delivery.EndpointID(heldID)).Count(sys()); err != nil || n != 0 {
		t.Errorf("the resumed endpoint's delivery: %d left (%v)", n, err)
	}
	if n, err := db.DeliveryAttempt.Query().Where(deliveryattempt.HasDeliveryWith(delivery.EventIDIn(old...))).Count(sys()); err != nil || n != 0 {
		t.Errorf("attempts of old events: %d left (%v)", n, err)
	}

	m = env.Scrape()
	for table, want := range map[string]float64{"events": 3, "deliveries": 3 + 3 + 1, "delivery_attempts": 3 + 6 + 1} {
		if got := m.Value("itemsvc_retention_pruned_rows_total", map[string]string{"table": table}); got != want {
			t.Errorf("pruned %s: %g, want %g", table, got, want)
		}
	}
	if age := m.Value("itemsvc_event_oldest_age_seconds", nil); age >= retention.Seconds() || age <= 0 {
		t.Errorf("oldest event's age %gs, want within EVENT_RETENTION (the recent event)", age)
	}
}

// TestPruneConcurrently: passes running at once (replicas sharing the
// database) delete each row once and fail nothing.
func TestPruneConcurrently(t *testing.T) {
	var c clock
	env := newEnv(t, &c)
	rc := newReceiver(t, http.StatusNoContent)
	epID := register(t, env, rc.URL)
	env.App.Start(context.Background())
	for range 9 {
		env.CreateItem(env.Alice, "old")
	}
	settled(t, env.App.DB.Client, epID, map[delivery.State]int{delivery.StateSucceeded: 9})
	c.set(boundary().Add(retention))
	errs := make(chan error, 3)
	for range cap(errs) {
		go func() {
			_, err := env.App.Retention.Prune(context.Background())
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("prune: %v", err)
		}
	}
	if n, err := env.App.DB.Client.Event.Query().Count(sys()); err != nil || n != 0 {
		t.Errorf("events left: %d (%v)", n, err)
	}
	m := env.Scrape()
	for table, want := range map[string]float64{"events": 9, "deliveries": 9, "delivery_attempts": 9} {
		if got := m.Value("itemsvc_retention_pruned_rows_total", map[string]string{"table": table}); got != want {
			t.Errorf("pruned %s: %g, want %g", table, got, want)
		}
	}
}

// TestExpiredCursor: a cursor older than EVENT_RETENTION, whether its
// event was pruned, is still kept, or is another user's, is 410
// CURSOR_EXPIRED on every way of resuming (REST after and cursor, SSE
// Last-Event-ID and after, GraphQL itemEvents(after:) over SSE and
// graphql-ws), with a message saying how to start over; a recent cursor
// still resumes, and malformed or unknown ones keep their answers.
func TestExpiredCursor(t *testing.T) {
	var c clock
	env := newEnv(t, &c)
	env.CreateItem(env.Alice, "pruned")
	env.CreateItem(env.Alice, "kept")
	env.CreateItem(env.Bob, "bob's")
	old := eventIDs(t, env, 2) // Alice's
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/events", Token: env.Bob.Token})
	var bobs []struct{ ID string }
	r.Data(t, &bobs)
	b := boundary()
	env.CreateItem(env.Alice, "recent")
	env.CreateItem(env.Alice, "newest")
	all := eventIDs(t, env, 4)
	if len(all) != 4 {
		t.Fatalf("events: %v", all)
	}
	c.set(b.Add(retention))
	// Prune the first old event only, as a pass would: its delivery-free row.
	if _, err := env.App.DB.Client.Event.Delete().Where(event.ID(old[0])).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	never := "evt_" + strings.ToLower(strings.Repeat("0", 26))
	unknownRecent := all[3][:len(all[3])-4] + "zzzz"

	expired := func(field string) func(t *testing.T, r *testutil.Response) {
		return func(t *testing.T, r *testutil.Response) {
			var env struct {
				Error struct {
					Message string
					Details map[string]any
				}
			}
			_ = json.Unmarshal(r.Body, &env)
			if env.Error.Details["field"] != field || env.Error.Details["retention"] != retention.String() {
				t.Errorf("details %v, want field %s and retention %s", env.Error.Details, field, retention)
			}
			if !strings.Contains(env.Error.Message, "re-read the items") || !strings.Contains(env.Error.Message, "newest") {
				t.Errorf("message %q does not say how to start over", env.Error.Message)
			}
		}
	}
	tok := env.Alice.Token
	scenarios := []testutil.Scenario{
		{Name: "after a pruned event", Method: "GET", Path: "/v1/events?after=" + old[0], Token: tok, Status: 410, Code: "CURSOR_EXPIRED", Check: expired("after")},
		{Name: "after an old event still kept", Method: "GET", Path: "/v1/events?after=" + old[1], Token: tok, Status: 410, Code: "CURSOR_EXPIRED", Check: expired("after")},
		{Name: "after another user's old event", Method: "GET", Path: "/v1/events?after=" + bobs[0].ID, Token: tok, Status: 410, Code: "CURSOR_EXPIRED"},
		{Name: "after an id older than any event", Method: "GET", Path: "/v1/events?after=" + never, Token: tok, Status: 410, Code: "CURSOR_EXPIRED"},
		{Name: "page cursor older", Method: "GET", Path: "/v1/events?cursor=" + old[1], Token: tok, Status: 410, Code: "CURSOR_EXPIRED", Check: expired("cursor")},
		{Name: "after a recent event", Method: "GET", Path: "/v1/events?after=" + all[2], Token: tok, Status: 200, Contains: []string{all[3]}, NotContains: []string{all[2], old[1]}},
		{Name: "no cursor: only the window", Method: "GET", Path: "/v1/events", Token: tok, Status: 200, Contains: []string{all[2], all[3]}, NotContains: []string{old[1]}},
		{Name: "after not an event id", Method: "GET", Path: "/v1/events?after=item_x", Token: tok, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "after an unknown recent id", Method: "GET", Path: "/v1/events?after=" + unknownRecent, Token: tok, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "stream Last-Event-ID pruned", Method: "GET", Path: "/v1/events/stream", Token: tok, Headers: map[string]string{"Last-Event-ID": old[0]}, Status: 410, Code: "CURSOR_EXPIRED", Check: expired("after")},
		{Name: "stream Last-Event-ID kept", Method: "GET", Path: "/v1/events/stream", Token: tok, Headers: map[string]string{"Last-Event-ID": old[1]}, Status: 410, Code: "CURSOR_EXPIRED"},
		{Name: "stream after by query", Method: "GET", Path: "/v1/events/stream?after=" + old[0] + "&access_token=" + tok, Status: 410, Code: "CURSOR_EXPIRED"},
		{Name: "stream Last-Event-ID unknown recent", Method: "GET", Path: "/v1/events/stream", Token: tok, Headers: map[string]string{"Last-Event-ID": unknownRecent}, Status: 400, Code: "VALIDATION_ERROR"},
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			// Bounded: a stream that opened instead of failing ends with
			// the deadline and fails the row on its 200.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req := httptest.NewRequestWithContext(ctx, sc.Method, sc.Path, nil)
			req.Header.Set("Authorization", "Bearer "+sc.Token)
			if sc.Token == "" {
				req.Header.Del("Authorization")
			}
			for k, v := range sc.Headers {
				req.Header.Set(k, v)
			}
			sc.Assert(t, env.Serve(req))
		})
	}

	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name, after, want string
	}{
		{"pruned", old[0], "CURSOR_EXPIRED"},
		{"kept", old[1], "CURSOR_EXPIRED"},
		{"unknown recent", unknownRecent, "VALIDATION_ERROR"},
	} {
		t.Run("graphql sse after "+tt.name, func(t *testing.T) {
			if got := subscribeSSE(t, srv, tok, tt.after); got != tt.want {
				t.Errorf("code %q, want %s", got, tt.want)
			}
		})
		t.Run("graphql-ws after "+tt.name, func(t *testing.T) {
			if got := subscribeWS(t, srv, tok, tt.after); got != tt.want {
				t.Errorf("code %q, want %s", got, tt.want)
			}
		})
	}
}

const itemEvents = `subscription($after: ID) { itemEvents(after: $after) { id } }`

// gqlResult is the first result of a subscription: its error code.
func gqlCode(t *testing.T, payload []byte) string {
	t.Helper()
	var res struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(payload, &res); err != nil || len(res.Errors) == 0 {
		t.Fatalf("result without an error: %s", payload)
	}
	code, _ := res.Errors[0].Extensions["code"].(string)
	return code
}

// subscribeSSE subscribes over GraphQL's Server-Sent Events and returns the
// code of the first result's error.
func subscribeSSE(t *testing.T, srv *httptest.Server, token, after string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": itemEvents, "variables": map[string]any{"after": after}})
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []byte
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		data = append(data, buf[:n]...)
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, "errors") {
				return gqlCode(t, []byte(rest))
			}
		}
		if err != nil {
			t.Fatalf("stream ended without an error: %v\n%s", err, data)
		}
	}
}

// subscribeWS subscribes over graphql-ws and returns the code of the error
// the subscription ends with.
func subscribeWS(t *testing.T, srv *httptest.Server, token, after string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	type msg struct {
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	sub, _ := json.Marshal(map[string]any{"query": itemEvents, "variables": map[string]any{"after": after}})
	for _, m := range []msg{{Type: "connection_init", Payload: init}, {ID: "1", Type: "subscribe", Payload: sub}} {
		if err := wsjson.Write(ctx, conn, m); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var m msg
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("no error before the connection ended: %v", err)
		}
		switch m.Type {
		case "error":
			var errs []json.RawMessage
			if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 {
				t.Fatalf("error message: %s", m.Payload)
			}
			return gqlCode(t, []byte(`{"errors":[`+string(errs[0])+`]}`))
		case "next":
			return gqlCode(t, m.Payload)
		}
	}
}

// TestPruneAudit: the pass deletes the audit records older than
// AUDIT_RETENTION, in batches, and keeps the recent ones; with 0 it keeps
// every record.
func TestPruneAudit(t *testing.T) {
	const auditRetention = 8760 * time.Hour
	for _, tt := range []struct {
		name      string
		retention time.Duration
		pruned    int
	}{
		{"past AUDIT_RETENTION", auditRetention, 3},
		{"0 keeps them forever", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c clock
			env := testutil.New(t, func(cfg *config.Config, o *app.Options) {
				cfg.AuditRetention = tt.retention
				o.Retention.Window.Now = c.now
				o.Retention.Batch = 2 // three old records take two batches
				o.Retention.Pause = time.Millisecond
			})
			db := env.App.DB.Client
			// The fixtures' keys were recorded (key.created): this test
			// counts and prunes the records it makes.
			if _, err := db.AuditEvent.Delete().Exec(sys()); err != nil {
				t.Fatal(err)
			}
			create := func(email string) {
				t.Helper()
				if r := env.Do(testutil.Request{Method: "POST", Path: "/v1/users", Token: env.Admin.Token,
					Body: map[string]any{"email": email, "name": "U"}}); r.Status != http.StatusCreated {
					t.Fatalf("create user: %d %s", r.Status, r.Body)
				}
			}
			for _, e := range []string{"o1@example.com", "o2@example.com", "o3@example.com"} {
				create(e)
			}
			b := boundary()
			create("r1@example.com")
			create("r2@example.com")
			before, err := db.AuditEvent.Query().Count(sys())
			if err != nil || before != 5 {
				t.Fatalf("%d records (%v), want 5", before, err)
			}
			c.set(b.Add(auditRetention))
			res, err := env.App.Retention.Prune(context.Background())
			if err != nil {
				t.Fatalf("prune: %v", err)
			}
			if res.Audit != tt.pruned {
				t.Errorf("pruned %d audit records, want %d", res.Audit, tt.pruned)
			}
			left, err := db.AuditEvent.Query().All(sys())
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != before-tt.pruned {
				t.Fatalf("%d records left, want %d", len(left), before-tt.pruned)
			}
			for _, e := range left {
				if tt.pruned > 0 && e.CreatedAt.Before(b) {
					t.Errorf("%s of %s outlived AUDIT_RETENTION", e.ID, e.CreatedAt)
				}
			}
			if got := env.Scrape().Value("itemsvc_retention_pruned_rows_total", map[string]string{"table": "audit_events"}); got != float64(tt.pruned) {
				t.Errorf("pruned audit_events metric %g, want %d", got, tt.pruned)
			}
		})
	}
}
