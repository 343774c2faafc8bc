package webhook_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestHangingEndpointDelaysNoOne: an endpoint that never answers holds at
// most PerEndpoint attempts in flight (across replicas too), and a healthy
// endpoint's deliveries all go out while those attempts hang.
func TestHangingEndpointDelaysNoOne(t *testing.T) {
	tests := []struct {
		name     string
		replicas int
	}{
		{"one dispatcher", 1},
		{"two replicas on one database", 2},
	}
	const perEndpoint = 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbURL := testutil.DatabaseURL(t)
			opts := []testutil.Option{
				fastWebhooks(time.Hour),
				testutil.WithConfig(func(c *config.Config) { c.DatabaseURL = dbURL }),
				testutil.WithAppOptions(func(o *app.Options) {
					o.Webhooks.Timeout = time.Minute // longer than the test: the attempts hang throughout
					o.Webhooks.PerEndpoint = perEndpoint
				}),
			}
			envs := make([]*testutil.Env, tt.replicas)
			for i := range envs {
				envs[i] = testutil.New(t, opts...)
			}
			env := envs[0]
			stuck := newHanging(t)
			healthy := newReceiver(t)
			stuckID, _ := register(t, env, env.Alice, stuck.URL)
			healthyID, _ := register(t, env, env.Alice, healthy.URL)
			for _, e := range envs {
				start(t, e)
			}

			const items = 30
			committed := map[string]time.Time{}
			for i := range items {
				e := envs[i%len(envs)]
				committed[e.CreateItem(e.Alice, "item")] = time.Now()
			}
			var worst time.Duration
			seen := map[string]bool{}
			deadline := time.After(10 * time.Second)
			for len(seen) < items {
				select {
				case r := <-healthy.got:
					id, _ := r.payload(t)["data"].(map[string]any)["id"].(string)
					seen[id] = true
					worst = max(worst, r.At.Sub(committed[id]))
				case <-deadline:
					t.Fatalf("the healthy endpoint got %d of %d events while the other hung", len(seen), items)
				}
			}
			// The hanging endpoint's attempts are still in flight, and
			// never more than its cap.
			for range perEndpoint {
				select {
				case <-stuck.arrived:
				case <-time.After(10 * time.Second):
					t.Fatal("the hanging endpoint was not attempted")
				}
			}
			inFlight, most := stuck.counts()
			if inFlight != perEndpoint || most != perEndpoint {
				t.Errorf("hanging endpoint: %d attempts in flight, at most %d; want %d", inFlight, most, perEndpoint)
			}
			c := env.App.DB.Client
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				n, err := c.Delivery.Query().Where(delivery.EndpointID(healthyID), delivery.StateEQ(delivery.StateSucceeded)).Count(sys())
				return err == nil && n == items
			}) {
				t.Error("the healthy endpoint's deliveries are not all recorded as succeeded")
			}
			claimed, err := c.Delivery.Query().Where(delivery.EndpointID(stuckID), delivery.ClaimedUntilNotNil()).Count(sys())
			if err != nil || claimed != perEndpoint {
				t.Errorf("hanging endpoint: %d deliveries claimed (err %v), want %d", claimed, err, perEndpoint)
			}
			t.Logf("healthy endpoint beside a hanging one: %d events, slowest commit-to-delivery %s", items, worst.Round(time.Millisecond))
		})
	}
}

// TestCircuitBreaker: an endpoint failing in a row gets one attempt at a
// time, and at the threshold its deliveries are held for a pause that
// doubles with each failed probe; a successful probe closes the breaker.
// Others are served meanwhile. The dispatcher's clock is moved, not waited on.
func TestCircuitBreaker(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	advance := func(d time.Duration) { skew.Add(int64(d)) }
	ms := 10 * time.Millisecond
	env := testutil.New(t, fastWebhooks(ms, ms, ms, ms, ms, ms), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.Now = now
		o.Webhooks.BreakerThreshold = 3
		o.Webhooks.BreakerPause = time.Minute
	}))
	failing := newReceiver(t)
	failing.setAnswer(func(*http.Request) (int, http.Header) { return http.StatusInternalServerError, nil })
	other := newReceiver(t)
	epID, _ := register(t, env, env.Alice, failing.URL)
	register(t, env, env.Bob, other.URL)
	start(t, env)
	env.CreateItem(env.Alice, "one")
	env.CreateItem(env.Alice, "two")
	c := env.App.DB.Client

	// state waits for the endpoint's run of failures to reach n, and
	// returns how far ahead of the dispatcher's clock its pause ends.
	state := func(n int) time.Duration {
		t.Helper()
		var left time.Duration
		if !testutil.Eventually(t, 10*time.Second, func() bool {
			ep, err := c.WebhookEndpoint.Get(sys(), epID)
			if err != nil || ep.ConsecutiveFailures != n || ep.BackoffUntil == nil {
				return false
			}
			left = ep.BackoffUntil.Sub(now())
			return true
		}) {
			ep, _ := c.WebhookEndpoint.Get(sys(), epID)
			t.Fatalf("breaker never opened at %d failures: %+v", n, ep)
		}
		return left
	}
	// between checks a pause is between its length less the test's slack
	// and its length.
	between := func(left, pause time.Duration) {
		t.Helper()
		if left > pause || left < pause-5*time.Second {
			t.Errorf("backing off for %s more, want about %s", left, pause)
		}
	}

	between(state(3), time.Minute)
	if n := len(failing.got); n != 3 {
		t.Errorf("the failing endpoint got %d requests when the breaker opened, want 3 (one at a time after the first failures)", n)
	}
	// Held, while others are served: an event for another endpoint, sent
	// after the breaker opened, arrives and nothing more reaches the failing one.
	bobs := env.CreateItem(env.Bob, "other")
	other.waitFor(t, 10*time.Second, eventIs("item.created", bobs))
	if n := len(failing.got); n != 3 {
		t.Errorf("the failing endpoint got %d requests while backing off, want 3", n)
	}
	if v, _ := metricValue(t, env, "itemsvc_webhook_breaker_trips_total", "", ""); v != 1 {
		t.Errorf("breaker trips = %v, want 1", v)
	}
	if v, _ := metricValue(t, env, "itemsvc_webhook_endpoints_backing_off", "", ""); v != 1 {
		t.Errorf("endpoints backing off = %v, want 1", v)
	}
	testutil.Scenario{Status: 200, Contains: []string{`"consecutive_failures":3`, `"backoff_until":"`}}.Assert(t,
		env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + epID, Token: env.Alice.Token}))

	// The pause ends: one probe, which fails, doubles it.
	advance(61 * time.Second)
	between(state(4), 2*time.Minute)
	if n := len(failing.got); n != 4 {
		t.Errorf("the failing endpoint got %d requests after the first pause, want 4 (one probe)", n)
	}

	// The receiver recovers: the next probe succeeds and both deliveries go.
	failing.setAnswer(nil)
	advance(121 * time.Second)
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		n, err := c.Delivery.Query().Where(delivery.EndpointID(epID), delivery.StateEQ(delivery.StateSucceeded)).Count(sys())
		return err == nil && n == 2
	}) {
		t.Fatalf("deliveries after the receiver recovered: %+v", deliveries(t, c, epID))
	}
	ep, err := c.WebhookEndpoint.Get(sys(), epID)
	if err != nil || ep.ConsecutiveFailures != 0 || ep.BackoffUntil != nil {
		t.Errorf("after a success the breaker is closed: %+v (err %v)", ep, err)
	}
	testutil.Scenario{Status: 200, Contains: []string{`"consecutive_failures":0`, `"backoff_until":null`}}.Assert(t,
		env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + epID, Token: env.Alice.Token}))
}
