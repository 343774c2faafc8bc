package rest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestKeysAudited: creating, changing and revoking a key writes key.created,
// key.updated and key.revoked in the change's transaction, with the actor
// (nil for the CLI), the key as target, the changed fields and the request
// id, and never the secret or its hash; a refused or empty change records
// nothing.
func TestKeysAudited(t *testing.T) {
	env := testutil.New(t)
	ctx := testutil.SystemContext(t)
	trail := func(t *testing.T, target string) []*ent.AuditEvent {
		t.Helper()
		evs, err := env.App.DB.Client.AuditEvent.Query().Where(auditevent.TargetID(target)).
			Order(auditevent.ByCreatedAt(), auditevent.ByID()).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	changes := func(t *testing.T, ev *ent.AuditEvent) string {
		t.Helper()
		b, err := json.Marshal(ev.Changes)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/keys", Token: env.Alice.Token,
		Body: map[string]any{"label": "CI", "scopes": []string{"read"}, "expires_at": expires.Format(time.RFC3339)}})
	var k struct{ ID, Key string }
	r.Data(t, &k)
	env.Do(testutil.Request{Method: "POST", Path: "/v1/keys", Token: env.Alice.Token, Body: map[string]any{"scopes": []string{}}})
	env.Do(testutil.Request{Method: "PUT", Path: "/v1/keys/" + k.ID, Token: env.Admin.Token, Body: map[string]any{"rate_limit_per_minute": 3}})
	env.Do(testutil.Request{Method: "PUT", Path: "/v1/keys/" + k.ID, Token: env.Alice.Token, Body: map[string]any{"label": "CI"}})
	env.Do(testutil.Request{Method: "PUT", Path: "/v1/keys/" + k.ID, Token: env.Alice.Token, Body: map[string]any{"rate_limit_per_minute": nil}})
	env.Do(testutil.Request{Method: "DELETE", Path: "/v1/keys/" + k.ID, Token: env.Alice.Token})
	env.Do(testutil.Request{Method: "DELETE", Path: "/v1/keys/" + k.ID, Token: env.Alice.Token})

	evs := trail(t, k.ID)
	want := []struct {
		action, actor string
		has           []string
	}{
		{"key.created", env.Alice.UserID, []string{`"label":[null,"CI"]`, `"scopes":[null,["read"]]`, `"expires_at":[null,"` + expires.Format(time.RFC3339) + `"]`, `"user_id":[null,"` + env.Alice.UserID + `"]`}},
		{"key.updated", env.Admin.UserID, []string{`"rate_limit_per_minute":[null,3]`}},
		{"key.revoked", env.Alice.UserID, []string{`"revoked_at":[null,"`}},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d records of the key, want %d (refused and empty changes record nothing): %v", len(evs), len(want), evs)
	}
	for i, w := range want {
		ev, got := evs[i], changes(t, evs[i])
		if ev.Action != w.action || ev.ActorID == nil || *ev.ActorID != w.actor || ev.RequestID == nil || *ev.RequestID == "" {
			t.Errorf("record %d: %s by %v (request %v), want %s by %s with a request id", i, ev.Action, ev.ActorID, ev.RequestID, w.action, w.actor)
		}
		for _, h := range w.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s changes %s lack %s", ev.Action, got, h)
			}
		}
		if strings.Contains(got, k.Key) || strings.Contains(got, "key_hash") || strings.Contains(got, `"key"`) {
			t.Errorf("%s changes carry the secret: %s", ev.Action, got)
		}
	}

	// The CLI's create and revoke are the system's: no actor, no request.
	nk, err := env.App.Service.CreateKey(context.Background(), "erin@example.com", "Erin", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.RevokeKey(context.Background(), nk.Key); err != nil {
		t.Fatal(err)
	}
	evs = trail(t, nk.KeyID)
	if len(evs) != 2 || evs[0].Action != "key.created" || evs[1].Action != "key.revoked" {
		t.Fatalf("CLI records: %v", evs)
	}
	for _, ev := range evs {
		if ev.ActorID != nil || ev.RequestID != nil {
			t.Errorf("CLI %s: actor %v, request %v, want none", ev.Action, ev.ActorID, ev.RequestID)
		}
		if got := changes(t, ev); strings.Contains(got, nk.Key) {
			t.Errorf("CLI %s changes carry the secret: %s", ev.Action, got)
		}
	}
}
