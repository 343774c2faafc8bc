package webhook_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestFanOut: who receives what. An endpoint receives its owner's items'
// events of the types it subscribes to (an admin's: everyone's), and none
// from before it existed; while inactive its deliveries are kept, pending,
// and nothing is sent.
func TestFanOut(t *testing.T) {
	env := testutil.New(t, fastWebhooks(time.Hour))
	rc := newReceiver(t)
	eps := map[string]string{}
	eps["alice-all"], _ = register(t, env, env.Alice, rc.URL+"/alice-all")
	eps["alice-deleted"], _ = register(t, env, env.Alice, rc.URL+"/alice-deleted", "item.deleted")
	eps["bob-all"], _ = register(t, env, env.Bob, rc.URL+"/bob-all")
	eps["admin-all"], _ = register(t, env, env.Admin, rc.URL+"/admin-all")
	eps["alice-inactive"], _ = register(t, env, env.Alice, rc.URL+"/alice-inactive")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + eps["alice-inactive"], Token: env.Alice.Token,
		Body: map[string]any{"active": false}}); r.Status != http.StatusOK {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}

	a := env.CreateItem(env.Alice, "a")
	eps["alice-late"], _ = register(t, env, env.Alice, rc.URL+"/alice-late") // after a's creation
	start(t, env)
	env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + a, Token: env.Alice.Token, Body: map[string]any{"name": "a2"}})
	env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + a, Token: env.Alice.Token})
	env.CreateItem(env.Bob, "b")

	want := map[string][]string{
		"alice-all":      {"item.created", "item.deleted", "item.updated"},
		"alice-deleted":  {"item.deleted"},
		"bob-all":        {"item.created"},
		"admin-all":      {"item.created", "item.created", "item.deleted", "item.updated"},
		"alice-inactive": {"item.created", "item.deleted", "item.updated"},
		"alice-late":     {"item.deleted", "item.updated"},
	}
	total := 0
	for name, w := range want {
		if name != "alice-inactive" {
			total += len(w)
		}
	}
	c := env.App.DB.Client
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		n, err := c.Delivery.Query().Where(delivery.StateEQ(delivery.StateSucceeded)).Count(sys())
		return err == nil && n == total
	}) {
		t.Fatalf("deliveries did not all succeed")
	}
	for name, id := range eps {
		var got []string
		for _, d := range deliveries(t, c, id) {
			ev, err := c.Event.Get(sys(), d.EventID)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Type)
		}
		slices.Sort(got)
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s received %v, want %v", name, got, want[name])
		}
	}
	for _, d := range deliveries(t, c, eps["alice-inactive"]) {
		if d.State != delivery.StatePending || d.Attempts != 0 {
			t.Errorf("paused endpoint's delivery: state %s after %d attempts, want pending, none", d.State, d.Attempts)
		}
	}
	if len(rc.got) != total {
		t.Errorf("the receiver got %d requests, want %d", len(rc.got), total)
	}
}

// TestRetryNeedsActiveEndpoint: a delivery of a disabled endpoint (410) is
// not retried by hand until the endpoint is turned back on.
func TestRetryNeedsActiveEndpoint(t *testing.T) {
	env := testutil.New(t, fastWebhooks(time.Hour))
	start(t, env)
	rc := newReceiver(t)
	rc.setAnswer(func(*http.Request) (int, http.Header) { return http.StatusGone, nil })
	epID, _ := register(t, env, env.Alice, rc.URL)
	env.CreateItem(env.Alice, "x")
	var d []map[string]any
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		r := env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + epID + "/deliveries?state=failed", Token: env.Alice.Token})
		r.Data(t, &d)
		return len(d) == 1
	}) {
		t.Fatal("no failed delivery")
	}
	retry := testutil.Request{Method: "POST", Path: "/v1/webhooks/" + epID + "/deliveries/" + d[0]["id"].(string) + "/retry", Token: env.Alice.Token}
	testutil.Scenario{Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"active"`}}.Assert(t, env.Do(retry))
	testutil.Scenario{Status: 200, Contains: []string{`"active":false`}}.Assert(t,
		env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + epID, Token: env.Alice.Token}))

	rc.setAnswer(nil)
	testutil.Scenario{Status: 200, Contains: []string{`"active":true`}}.Assert(t,
		env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + epID, Token: env.Alice.Token, Body: map[string]any{"active": true}}))
	testutil.Scenario{Status: 200, Contains: []string{`"state":"pending"`}}.Assert(t, env.Do(retry))
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epID)
		return ds[0].State == delivery.StateSucceeded && ds[0].Attempts == 2
	}) {
		t.Errorf("after re-enabling and retrying: %+v", deliveries(t, env.App.DB.Client, epID)[0])
	}
}
