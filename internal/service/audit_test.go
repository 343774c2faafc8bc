package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestRecordAudit: a record is written with the transaction of its change
// or not at all, its actor the viewer (nil for the system), its request id
// the context's, and its values as JSON.
func TestRecordAudit(t *testing.T) {
	env := testutil.New(t)
	svc := env.App.Service
	as := viewer.NewContext(context.Background(), viewer.Viewer{UserID: env.Alice.UserID, Role: viewer.RoleUser})
	changes := map[string]service.Change{"name": {Before: "a", After: "b"}, "count": {After: 3}}
	rows := []struct {
		name      string
		ctx       context.Context
		target    string
		fail      error
		written   bool
		actor     string
		requestID string
	}{
		{"committed, as a user, in a request", service.WithRequestID(as, "req-1"), "user_committed", nil, true, env.Alice.UserID, "req-1"},
		{"committed, as the system", service.System(context.Background()), "user_system", nil, true, "", ""},
		{"rolled back", service.WithRequestID(as, "req-2"), "user_rolledback", errors.New("the change failed after its record"), false, "", ""},
	}
	sys := testutil.SystemContext(t)
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			err := svc.AuditInTx(r.ctx, service.AuditUserUpdated, r.target, changes, r.fail)
			if !errors.Is(err, r.fail) {
				t.Fatalf("err %v, want %v", err, r.fail)
			}
			got, err := env.App.DB.Client.AuditEvent.Query().Where(auditevent.TargetID(r.target)).All(sys)
			if err != nil {
				t.Fatal(err)
			}
			if !r.written {
				if len(got) != 0 {
					t.Fatalf("a rolled-back change left %d records", len(got))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d records, want 1", len(got))
			}
			e := got[0]
			if actor := ptr(e.ActorID); actor != r.actor {
				t.Errorf("actor %q, want %q", actor, r.actor)
			}
			if id := ptr(e.RequestID); id != r.requestID {
				t.Errorf("request id %q, want %q", id, r.requestID)
			}
			if e.Action != "user.updated" || string(e.Changes["name"][0]) != `"a"` || string(e.Changes["name"][1]) != `"b"` ||
				string(e.Changes["count"][0]) != "null" || string(e.Changes["count"][1]) != "3" {
				t.Errorf("record %+v", e)
			}
		})
	}
}

func ptr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
