package webhook_test

import (
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// TestDeliveryFollowsOwnerRights: a delivery made while its endpoint's
// owner could receive the event is checked again before it is sent. An
// admin's endpoint, paused while another user's item changes, holds a
// delivery of it; if the admin is disabled or demoted meanwhile, resuming
// the endpoint fails that delivery unsent (webhook.NotEntitled) instead of
// sending another user's item to someone who may no longer see it.
func TestDeliveryFollowsOwnerRights(t *testing.T) {
	tests := []struct {
		name     string
		change   service.UserChanges
		wantSent bool
	}{
		{"unchanged: sent", service.UserChanges{}, true},
		{"disabled: failed unsent", service.UserChanges{Disabled: new(true)}, false},
		{"demoted: failed unsent", service.UserChanges{Role: new("user")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testutil.New(t, fastWebhooks(time.Hour))
			sam := env.NewActor("sam@example.com", "Sam", true)
			rc := newReceiver(t)
			witness := newReceiver(t)
			epID, _ := register(t, env, sam, rc.URL)
			register(t, env, env.Admin, witness.URL)
			pause := func(active bool) {
				t.Helper()
				testutil.Scenario{Status: 200}.Assert(t, env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + epID,
					Token: env.Admin.Token, Body: map[string]any{"active": active}}))
			}
			pause(false)
			start(t, env)
			id := env.CreateItem(env.Bob, "bob's")
			witness.waitAll(t, 10*time.Second, eventIs("item.created", id))
			c := env.App.DB.Client
			if !testutil.Eventually(t, 10*time.Second, func() bool { return len(deliveries(t, c, epID)) == 1 }) {
				t.Fatal("no delivery held for the paused endpoint")
			}
			if _, err := env.App.Service.UpdateUser(service.System(t.Context()), sam.UserID, tt.change); err != nil {
				t.Fatal(err)
			}
			pause(true)
			if tt.wantSent {
				rc.waitAll(t, 10*time.Second, eventIs("item.created", id))
				return
			}
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				ds := deliveries(t, c, epID)
				return ds[0].State == delivery.StateFailed
			}) {
				t.Fatalf("delivery: %+v", deliveries(t, c, epID)[0])
			}
			if d := deliveries(t, c, epID)[0]; d.LastError != webhook.NotEntitled {
				t.Errorf("last error %q, want %q", d.LastError, webhook.NotEntitled)
			}
			if n := len(rc.got); n != 0 {
				t.Fatalf("the endpoint got %d requests", n)
			}
		})
	}
}
