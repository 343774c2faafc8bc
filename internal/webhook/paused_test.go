package webhook_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestPausedEndpointKeepsEvents: events for a paused endpoint wait as
// pending deliveries, not attempted; on resume they go out in the order
// they were created, unless they outlived the retention, which fails them.
func TestPausedEndpointKeepsEvents(t *testing.T) {
	tests := []struct {
		name string
		// pausedFor moves the dispatcher's clock while the endpoint is paused.
		pausedFor time.Duration
		wantSent  bool
	}{
		{"resumed within the retention: sent in order of creation", 0, true},
		{"paused beyond the retention: failed, never sent", 73 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skew atomic.Int64
			env := testutil.New(t, fastWebhooks(time.Hour), testutil.WithAppOptions(func(o *app.Options) {
				o.Webhooks.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
				o.Webhooks.PerEndpoint = 1 // one at a time: arrivals keep the claim order
				o.Webhooks.PauseRetention = 72 * time.Hour
			}))
			paused := newReceiver(t)
			witness := newReceiver(t)
			epID, secret := register(t, env, env.Alice, paused.URL)
			register(t, env, env.Alice, witness.URL)
			put := func(active bool) {
				t.Helper()
				testutil.Scenario{Status: 200}.Assert(t, env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + epID,
					Token: env.Alice.Token, Body: map[string]any{"active": active}}))
			}
			put(false)
			start(t, env)

			var order []func(received) bool
			var matchers []func(received) bool
			for _, name := range []string{"first", "second", "third", "fourth", "fifth"} {
				id := env.CreateItem(env.Alice, name)
				order = append(order, eventIs("item.created", id))
				matchers = append(matchers, eventIs("item.created", id))
			}
			// The active endpoint got every event: the dispatcher has been
			// through them, and kept the paused endpoint's.
			witness.waitAll(t, 10*time.Second, matchers...)
			c := env.App.DB.Client
			if !testutil.Eventually(t, 10*time.Second, func() bool { return len(deliveries(t, c, epID)) == len(order) }) {
				t.Fatalf("paused endpoint has %d deliveries, want %d", len(deliveries(t, c, epID)), len(order))
			}
			for _, d := range deliveries(t, c, epID) {
				if d.State != delivery.StatePending || d.Attempts != 0 {
					t.Errorf("while paused: state %s after %d attempts, want pending, none", d.State, d.Attempts)
				}
			}
			if n := len(paused.got); n != 0 {
				t.Fatalf("the paused endpoint got %d requests", n)
			}

			if tt.pausedFor > 0 {
				skew.Add(int64(tt.pausedFor))
				if !testutil.Eventually(t, 10*time.Second, func() bool {
					for _, d := range deliveries(t, c, epID) {
						if d.State != delivery.StateFailed {
							return false
						}
					}
					return true
				}) {
					t.Fatalf("deliveries older than the retention did not fail: %+v", deliveries(t, c, epID))
				}
				for _, d := range deliveries(t, c, epID) {
					if d.Attempts != 0 || !strings.Contains(d.LastError, "expired") {
						t.Errorf("expired delivery: %d attempts, last_error %q", d.Attempts, d.LastError)
					}
				}
			}

			put(true)
			if !tt.wantSent {
				// A later event arrives first and alone: the expired ones stay failed.
				later := env.CreateItem(env.Alice, "after the resume")
				r := paused.waitFor(t, 10*time.Second, func(received) bool { return true })
				if !eventIs("item.created", later)(r) {
					t.Errorf("first request after the resume: %s, want the later event", r.Body)
				}
				return
			}
			for i, match := range order {
				r := paused.waitFor(t, 10*time.Second, func(received) bool { return true })
				verify(t, secret, r)
				if !match(r) {
					t.Errorf("request %d after the resume: %s, not the event created %d-th", i+1, r.Body, i+1)
				}
			}
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				n, err := c.Delivery.Query().Where(delivery.EndpointID(epID), delivery.StateEQ(delivery.StateSucceeded)).Count(sys())
				return err == nil && n == len(order)
			}) {
				t.Error("resumed deliveries not all recorded as succeeded")
			}
		})
	}
}

// TestRecoverAfterOutage: a receiver down longer than the retry schedule
// leaves failed deliveries; one recover call sends them all again, signed,
// each in one more attempt.
func TestRecoverAfterOutage(t *testing.T) {
	env := testutil.New(t, fastWebhooks(10*time.Millisecond), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.BreakerThreshold = 100 // the attempts run out before the breaker engages
	}))
	start(t, env)
	rc := newReceiver(t)
	rc.setAnswer(func(*http.Request) (int, http.Header) { return http.StatusServiceUnavailable, nil })
	epID, secret := register(t, env, env.Alice, rc.URL)
	before := time.Now().UTC()
	var matchers []func(received) bool
	for range 5 {
		matchers = append(matchers, eventIs("item.created", env.CreateItem(env.Alice, "during the outage")))
	}
	c := env.App.DB.Client
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		n, err := c.Delivery.Query().Where(delivery.EndpointID(epID), delivery.StateEQ(delivery.StateFailed)).Count(sys())
		return err == nil && n == len(matchers)
	}) {
		t.Fatalf("deliveries did not all fail: %+v", deliveries(t, c, epID))
	}
	for len(rc.got) > 0 {
		<-rc.got // the attempts during the outage
	}

	rc.setAnswer(nil) // the receiver is back
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + epID + "/recover", Token: env.Alice.Token,
		Body: map[string]any{"since": before.Format(time.RFC3339Nano)}})
	testutil.Scenario{Status: 200, Contains: []string{`"requeued":5`}}.Assert(t, r)
	for _, got := range rc.waitAll(t, 10*time.Second, matchers...) {
		verify(t, secret, got)
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		n, err := c.Delivery.Query().Where(delivery.EndpointID(epID), delivery.StateEQ(delivery.StateSucceeded), delivery.Attempts(3)).Count(sys())
		return err == nil && n == len(matchers)
	}) {
		t.Errorf("recovered deliveries: %+v", deliveries(t, c, epID))
	}
}

// TestHeldByBreakerExpires: deliveries held by an endpoint's circuit breaker
// spend no attempts, and fail once they are older than the retention, as a
// paused endpoint's do; the sweep runs before the next claim.
func TestHeldByBreakerExpires(t *testing.T) {
	var skew atomic.Int64
	ms := 10 * time.Millisecond
	env := testutil.New(t, fastWebhooks(ms, ms, ms, ms, ms), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		o.Webhooks.BreakerThreshold = 2
		o.Webhooks.BreakerPause = time.Hour
		o.Webhooks.PauseRetention = 72 * time.Hour
	}))
	rc := newReceiver(t)
	rc.setAnswer(func(*http.Request) (int, http.Header) { return http.StatusBadGateway, nil })
	epID, _ := register(t, env, env.Alice, rc.URL)
	start(t, env)
	env.CreateItem(env.Alice, "held")
	c := env.App.DB.Client
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ep, err := c.WebhookEndpoint.Get(sys(), epID)
		return err == nil && ep.BackoffUntil != nil
	}) {
		t.Fatal("the breaker never opened")
	}
	skew.Add(int64(73 * time.Hour))
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		return deliveries(t, c, epID)[0].State == delivery.StateFailed
	}) {
		t.Fatalf("held delivery did not expire: %+v", deliveries(t, c, epID)[0])
	}
	d := deliveries(t, c, epID)[0]
	if d.Attempts != 2 || !strings.Contains(d.LastError, "expired") {
		t.Errorf("expired delivery: %d attempts, last_error %q; want 2, expired", d.Attempts, d.LastError)
	}
}
