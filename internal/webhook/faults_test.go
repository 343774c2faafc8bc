package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// TestReceiverDownThenUp: while nothing listens at the endpoint the attempts
// fail and are logged; once the receiver is back, the event arrives.
func TestReceiverDownThenUp(t *testing.T) {
	env := testutil.New(t, fastWebhooks(20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond,
		20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond,
		20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, time.Hour))
	start(t, env)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connections are refused
	epID, secret := register(t, env, env.Alice, "http://"+addr+"/hook")
	itemID := env.CreateItem(env.Alice, "while down")

	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epID)
		return len(ds) == 1 && ds[0].Attempts >= 2 && ds[0].LastError != ""
	}) {
		t.Fatalf("no failed attempts logged while the receiver was down: %v", deliveries(t, env.App.DB.Client, epID))
	}

	rc := &receiver{got: make(chan received, 10)}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	if rc.Listener, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("could not listen again on %s: %v", addr, err)
	}
	rc.Start()
	t.Cleanup(rc.Close)
	r := rc.waitFor(t, 10*time.Second, eventIs("item.created", itemID))
	verify(t, secret, r)

	if !testutil.Eventually(t, 5*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epID)
		return ds[0].State == delivery.StateSucceeded
	}) {
		t.Fatal("delivery not marked succeeded")
	}
	d := deliveries(t, env.App.DB.Client, epID)[0]
	if len(d.Edges.AttemptLog) != d.Attempts || d.Attempts < 3 {
		t.Errorf("attempts = %d, log has %d", d.Attempts, len(d.Edges.AttemptLog))
	}
	for _, a := range d.Edges.AttemptLog {
		if a.Number < d.Attempts && (a.StatusCode != nil || a.Error == "") {
			t.Errorf("attempt %d while down: status %v, error %q", a.Number, a.StatusCode, a.Error)
		}
	}
}

// TestDeliveredAfterRestart: a server stopped before fanning its events out,
// or killed while holding a claim, loses nothing: the next one delivers.
func TestDeliveredAfterRestart(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	sameDB := testutil.WithConfig(func(c *config.Config) { c.DatabaseURL = dbURL })
	rc := newReceiver(t)

	// First life: changes commit, the dispatcher never runs (killed).
	first := testutil.New(t, fastWebhooks(), sameDB)
	_, secret := register(t, first, first.Alice, rc.URL)
	pending := first.CreateItem(first.Alice, "outbox only")
	claimed := first.CreateItem(first.Alice, "claimed by the dead")
	// The dead dispatcher had fanned the second event out and claimed it.
	c := first.App.DB.Client
	ev, err := c.Event.Query().Where(event.ItemID(claimed)).Only(sys())
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.WebhookEndpoint.Query().Only(sys())
	if err != nil {
		t.Fatal(err)
	}
	lease := time.Now().Add(40 * time.Second)
	if err := c.Delivery.Create().SetEventID(ev.ID).SetEndpointID(ep.ID).SetNextAttemptAt(time.Now()).
		SetClaimedUntil(lease).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	if err := c.Event.UpdateOne(ev).SetDispatchedAt(time.Now()).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	first.App.Close()

	// Second life, its clock past the dead dispatcher's lease.
	second := testutil.New(t, fastWebhooks(), sameDB, testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.Now = func() time.Time { return time.Now().Add(41 * time.Second) }
	}))
	start(t, second)
	for _, r := range rc.waitAll(t, 10*time.Second, eventIs("item.created", pending), eventIs("item.created", claimed)) {
		verify(t, secret, r)
	}
}

// TestRolledBackChangeEmitsNothing: an item change whose transaction rolls
// back leaves no event; a later committed change is delivered alone.
func TestRolledBackChangeEmitsNothing(t *testing.T) {
	env := testutil.New(t, fastWebhooks())
	start(t, env)
	rc := newReceiver(t)
	register(t, env, env.Alice, rc.URL)

	ctx := as(env.Alice, false)
	tx, err := env.App.DB.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ghost, err := tx.Item.Create().SetName("ghost").SetUserID(env.Alice.UserID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tx.Event.Query().Where(event.ItemID(ghost.ID)).Count(sys()); err != nil || n != 1 {
		t.Fatalf("inside the transaction the event exists: n=%d err=%v", n, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	real := env.CreateItem(env.Alice, "real")
	// Deliveries go out in commit order: once the later change has arrived,
	// anything the rolled-back one had emitted would have arrived before it.
	rc.waitFor(t, 10*time.Second, func(r received) bool {
		if eventIs("item.created", ghost.ID)(r) {
			t.Errorf("rolled-back item was delivered: %s", r.Body)
		}
		return eventIs("item.created", real)(r)
	})
	if n, err := env.App.DB.Client.Event.Query().Where(event.ItemID(ghost.ID)).Count(sys()); err != nil || n != 0 {
		t.Errorf("events of the rolled-back item: %d (err %v)", n, err)
	}
}

// TestTwoDispatchersDeliverOnce: two servers on one database (two replicas)
// deliver each event exactly once, each in one attempt.
func TestTwoDispatchersDeliverOnce(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	sameDB := testutil.WithConfig(func(c *config.Config) { c.DatabaseURL = dbURL })
	one := testutil.New(t, fastWebhooks(time.Hour), sameDB)
	two := testutil.New(t, fastWebhooks(time.Hour), sameDB)
	rc := newReceiver(t)
	epAlice, _ := register(t, one, one.Alice, rc.URL+"/alice")
	epAdmin, _ := register(t, one, one.Admin, rc.URL+"/admin")
	start(t, one)
	start(t, two)

	const items = 60
	for i := range items {
		// Alternate replicas, as a load balancer would.
		env := one
		if i%2 == 1 {
			env = two
		}
		env.CreateItem(env.Alice, "item")
	}
	const want = 2 * items // the owner's endpoint and the admin's
	seen := map[string]int{}
	total := 0
	deadline := time.After(30 * time.Second)
	for len(seen) < want {
		select {
		case r := <-rc.got:
			seen[r.Path+" "+r.Header.Get(webhook.HeaderID)]++
			total++
		case <-deadline:
			t.Fatalf("%d of %d deliveries arrived", len(seen), want)
		}
	}
	// Every attempt is recorded after it is made: once all deliveries show
	// succeeded, no send is still in flight, and what arrived is final.
	c := one.App.DB.Client
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		n, err := c.Delivery.Query().Where(delivery.StateEQ(delivery.StateSucceeded)).Count(sys())
		return err == nil && n == want
	}) {
		t.Fatal("deliveries not all recorded as succeeded")
	}
	total += len(rc.got)
	if total != want {
		t.Errorf("receiver got %d requests for %d deliveries: duplicates", total, want)
	}
	for _, ep := range []string{epAlice, epAdmin} {
		for _, d := range deliveries(t, c, ep) {
			if d.Attempts != 1 || len(d.Edges.AttemptLog) != 1 {
				t.Errorf("delivery %s: %d attempts, %d logged", d.ID, d.Attempts, len(d.Edges.AttemptLog))
			}
		}
	}
}

// TestShutdown: when the server stops, an attempt in flight that is answered
// within the drain time is recorded; one that is not is released unspent.
// Either way nothing stays claimed.
func TestShutdown(t *testing.T) {
	tests := []struct {
		name      string
		answerIn  time.Duration // how long the receiver takes after shutdown begins
		wantState delivery.State
		attempts  int
	}{
		{"answered within the drain time: recorded", 20 * time.Millisecond, delivery.StateSucceeded, 1},
		{"not answered in time: released unspent", time.Hour, delivery.StatePending, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testutil.New(t, fastWebhooks())
			rc := newReceiver(t)
			shutdown := make(chan struct{})
			rc.setAnswer(func(r *http.Request) (int, http.Header) {
				<-shutdown
				select {
				case <-time.After(tt.answerIn):
				case <-r.Context().Done():
				}
				return http.StatusOK, nil
			})
			epID, _ := register(t, env, env.Alice, rc.URL)
			env.CreateItem(env.Alice, "in flight at shutdown")

			d := webhook.New(env.App.DB.Client, env.App.DB.Dialect, webhook.NewGuard(true, nil), webhook.Options{
				PollInterval: 10 * time.Millisecond,
				DrainTimeout: 500 * time.Millisecond,
				Secrets:      env.App.Keys.Box(secrets.PurposeWebhooks),
			})
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { d.Run(ctx); close(stopped) }()
			rc.waitFor(t, 10*time.Second, func(received) bool { return true })
			if deliveries(t, env.App.DB.Client, epID)[0].ClaimedUntil == nil {
				t.Error("delivery was not claimed while being sent")
			}
			cancel() // SIGTERM
			close(shutdown)
			select {
			case <-stopped:
			case <-time.After(10 * time.Second):
				t.Fatal("dispatcher did not stop")
			}
			got := deliveries(t, env.App.DB.Client, epID)[0]
			if got.ClaimedUntil != nil || got.State != tt.wantState || got.Attempts != tt.attempts {
				t.Errorf("after shutdown: claimed_until %v, state %s, attempts %d; want unclaimed, %s, %d",
					got.ClaimedUntil, got.State, got.Attempts, tt.wantState, tt.attempts)
			}
		})
	}
}

// TestDeliveryErrorRedactsURL: an attempt that fails names the URL in its
// error, with the credentials the URL carries (a password, a query's
// token) redacted in the delivery log, which admins read too.
func TestDeliveryErrorRedactsURL(t *testing.T) {
	env := testutil.New(t, fastWebhooks(20*time.Millisecond, time.Hour))
	start(t, env)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the attempt fails
	const pass, token = "pa55w0rd", "t0ken-s3cret"
	epID, _ := register(t, env, env.Alice, "http://hookuser:"+pass+"@"+addr+"/hook?token="+token)
	env.CreateItem(env.Alice, "undeliverable")
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epID)
		return len(ds) == 1 && ds[0].LastError != ""
	}) {
		t.Fatal("no failed attempt logged")
	}
	d := deliveries(t, env.App.DB.Client, epID)[0]
	want := `"http://REDACTED:REDACTED@` + addr + `/hook?token=REDACTED"`
	for _, msg := range []string{d.LastError, d.Edges.AttemptLog[0].Error} {
		if strings.Contains(msg, pass) || strings.Contains(msg, token) || !strings.Contains(msg, want) {
			t.Errorf("delivery error %q: want the URL as %s", msg, want)
		}
	}
}
