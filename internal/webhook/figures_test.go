package webhook_test

import (
	"slices"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestDeliveryFigures measures, with a local receiver, the time from an item
// change's commit to its delivery (one change at a time: the wake-up path)
// and the throughput of draining a backlog. It logs the figures (go test -v)
// and fails only when delivery is far slower than the poll fallback.
func TestDeliveryFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	env := testutil.New(t, fastWebhooks(time.Hour), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.PollInterval = time.Second // the production fallback: wake-ups must beat it
	}))
	rc := newReceiver(t)
	register(t, env, env.Alice, rc.URL)
	ctx := as(env.Alice, false)

	// Throughput: a backlog of events drained by one dispatcher.
	const backlog = 500
	for range backlog {
		if _, err := env.App.Service.CreateItem(ctx, ent.CreateItemInput{Name: "backlog"}); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	start(t, env)
	for range backlog {
		rc.waitFor(t, 60*time.Second, func(received) bool { return true })
	}
	drain := time.Since(began)

	// Latency: commit to arrival, one change at a time.
	const samples = 200
	lat := make([]time.Duration, 0, samples)
	for range samples {
		it, err := env.App.Service.CreateItem(ctx, ent.CreateItemInput{Name: "timed"})
		if err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		r := rc.waitFor(t, 10*time.Second, eventIs("item.created", it.ID))
		lat = append(lat, r.At.Sub(committed))
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	db := "sqlite"
	if testutil.OnPostgres() {
		db = "postgres"
	}
	t.Logf("%s: drained %d deliveries in %s (%.0f/s); commit to delivery: median %s, p99 %s, max %s",
		db, backlog, drain.Round(time.Millisecond), float64(backlog)/drain.Seconds(),
		p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	if p50 > 500*time.Millisecond {
		t.Errorf("median commit-to-delivery %s: the commit wake-up is not working (poll is 1s)", p50)
	}
}

// TestHangingNeighbourFigures measures what a receiver that never answers
// (the production 15 s timeout) does to a healthy endpoint's deliveries:
// commit-to-delivery of 30 events to each, the healthy one's median and
// worst. It logs the figures and fails only when the healthy endpoint waits
// for the other's timeout.
func TestHangingNeighbourFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	env := testutil.New(t, fastWebhooks(time.Hour), testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.Timeout = 15 * time.Second
	}))
	stuck := newHanging(t)
	healthy := newReceiver(t)
	register(t, env, env.Alice, stuck.URL)
	register(t, env, env.Alice, healthy.URL)
	start(t, env)
	const items = 30
	committed := map[string]time.Time{}
	for range items {
		committed[env.CreateItem(env.Alice, "item")] = time.Now()
	}
	lat := make([]time.Duration, 0, items)
	for range items {
		r := healthy.waitFor(t, 40*time.Second, func(received) bool { return true })
		id, _ := r.payload(t)["data"].(map[string]any)["id"].(string)
		lat = append(lat, r.At.Sub(committed[id]))
	}
	slices.Sort(lat)
	_, most := stuck.counts()
	t.Logf("healthy endpoint beside one that never answers (15s timeout): %d events, median %s, worst %s; the hanging one had at most %d attempts in flight",
		items, lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), most)
	if lat[len(lat)-1] > 5*time.Second {
		t.Errorf("the healthy endpoint waited %s: it queued behind the hanging one", lat[len(lat)-1])
	}
}
