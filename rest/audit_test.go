package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// auditLog reads the audit records written since the last look, straight
// from the database.
type auditLog struct {
	t    *testing.T
	db   *ent.Client
	seen map[string]bool
}

func newAuditLog(t *testing.T, env *testutil.Env) *auditLog {
	l := &auditLog{t: t, db: env.App.DB.Client, seen: map[string]bool{}}
	l.fresh() // the fixtures' records
	return l
}

// fresh returns the records not returned before.
func (l *auditLog) fresh() []*ent.AuditEvent {
	l.t.Helper()
	all, err := l.db.AuditEvent.Query().All(testutil.SystemContext(l.t))
	if err != nil {
		l.t.Fatal(err)
	}
	var out []*ent.AuditEvent
	for _, e := range all {
		if !l.seen[e.ID] {
			l.seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// stamp stands for any RFC 3339 timestamp in a literal of changes.
const stamp = "<timestamp>"

// auditChanges decodes a record's changes for comparison with a literal,
// each timestamp replaced by stamp.
func auditChanges(t *testing.T, m map[string][2]json.RawMessage) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	testutil.MustJSON(t, b, &out)
	for _, v := range out {
		pair, _ := v.([]any)
		for i, x := range pair {
			if s, ok := x.(string); ok {
				if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
					pair[i] = stamp
				}
			}
		}
	}
	return out
}

// TestAuditRecordsEachChange: every change of a user, webhook or delivery,
// and an admin's change of another user's item, through the API writes
// exactly one audit record, in the transaction of the change, naming its
// actor, target, request id and the fields that changed as [before, after];
// a refused change writes none, nor does a user's change of their own item;
// and no record carries a secret. One row per action and per refusal, in order on one
// database.
func TestAuditRecordsEachChange(t *testing.T) {
	env := webhookEnv(t)
	admin, alice, bob := env.Admin, env.Alice, env.Bob
	log := newAuditLog(t, env)
	sys := testutil.SystemContext(t)
	start := time.Now().UTC().Add(-time.Minute)

	var frank, hook string
	var secrets []string
	keepSecret := func(r *testutil.Response) {
		var w struct{ Secret string }
		r.Data(t, &w)
		if w.Secret == "" {
			t.Fatalf("no secret in %s", r.Body)
		}
		secrets = append(secrets, w.Secret)
	}
	// failedDelivery makes a failed delivery of alice's latest item to hook.
	failedDelivery := func() string {
		t.Helper()
		item := env.CreateItem(alice, "delivered")
		ev, err := env.App.DB.Client.Event.Query().Where(event.ItemID(item)).Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		d, err := env.App.DB.Client.Delivery.Create().SetEventID(ev.ID).SetEndpointID(hook).
			SetState(delivery.StateFailed).SetNextAttemptAt(time.Now()).Save(sys)
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	var retried, item string

	type req = testutil.Request
	rows := []struct {
		name    string
		req     func() req
		status  int
		after   func(r *testutil.Response) // reads the answer (ids, secrets)
		action  string                     // "": no record (a refusal, or no administrative change)
		actor   string                     // "": the system
		target  func() string
		changes map[string]any
	}{
		{name: "admin creates a user", status: 201, action: "user.created", actor: admin.UserID,
			req: func() req {
				return req{Method: "POST", Path: "/v1/users", Token: admin.Token,
					Body: map[string]any{"email": "frank@example.com", "name": "Frank"}}
			},
			after: func(r *testutil.Response) {
				var u struct{ ID string }
				r.Data(t, &u)
				frank = u.ID
			},
			target: func() string { return frank },
			changes: map[string]any{"email": []any{nil, "frank@example.com"}, "name": []any{nil, "Frank"},
				"role": []any{nil, "user"}, "disabled": []any{nil, false}}},
		{name: "an email taken", status: 400, req: func() req {
			return req{Method: "POST", Path: "/v1/users", Token: admin.Token,
				Body: map[string]any{"email": "FRANK@example.com", "name": "F"}}
		}},
		{name: "a user may not create users", status: 403, req: func() req {
			return req{Method: "POST", Path: "/v1/users", Token: alice.Token,
				Body: map[string]any{"email": "g@example.com", "name": "G"}}
		}},
		{name: "admin renames and promotes", status: 200, action: "user.updated", actor: admin.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/users/" + frank, Token: admin.Token,
					Body: map[string]any{"name": "Frank F.", "role": "admin", "disabled": false}}
			},
			target:  func() string { return frank },
			changes: map[string]any{"name": []any{"Frank", "Frank F."}, "role": []any{"user", "admin"}}},
		{name: "a user renames themselves", status: 200, action: "user.updated", actor: alice.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token, Body: map[string]any{"name": "Alice A."}}
			},
			target:  func() string { return alice.UserID },
			changes: map[string]any{"name": []any{"Alice", "Alice A."}}},
		{name: "a user may not change their role", status: 403, req: func() req {
			return req{Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token, Body: map[string]any{"role": "admin"}}
		}},
		{name: "admin disables a user", status: 200, action: "user.updated", actor: admin.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/users/" + frank, Token: admin.Token, Body: map[string]any{"disabled": true}}
			},
			target:  func() string { return frank },
			changes: map[string]any{"disabled": []any{false, true}}},
		{name: "the last enabled admin stays one", status: 400, req: func() req {
			return req{Method: "PUT", Path: "/v1/users/" + admin.UserID, Token: admin.Token, Body: map[string]any{"role": "user"}}
		}},
		{name: "a change of nothing is still recorded", status: 200, action: "user.updated", actor: admin.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/users/" + frank, Token: admin.Token, Body: map[string]any{"disabled": true}}
			},
			target: func() string { return frank }, changes: map[string]any{}},

		{name: "a user creates a webhook", status: 201, action: "webhook.created", actor: alice.UserID,
			req: func() req {
				return req{Method: "POST", Path: "/v1/webhooks", Token: alice.Token,
					Body: map[string]any{"url": "https://hooks.example.com/audit"}}
			},
			after: func(r *testutil.Response) {
				var w struct{ ID string }
				r.Data(t, &w)
				hook = w.ID
				keepSecret(r)
			},
			target: func() string { return hook },
			changes: map[string]any{"url": []any{nil, "https://hooks.example.com/audit"}, "description": []any{nil, ""},
				"events": []any{nil, []any{}}, "active": []any{nil, true}}},
		{name: "a user updates it", status: 200, action: "webhook.updated", actor: alice.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/webhooks/" + hook, Token: alice.Token,
					Body: map[string]any{"description": "audited", "events": []string{"item.created"}, "active": true}}
			},
			target: func() string { return hook },
			changes: map[string]any{"description": []any{"", "audited"},
				"events": []any{[]any{}, []any{"item.created"}}}},
		{name: "a bad url", status: 400, req: func() req {
			return req{Method: "PUT", Path: "/v1/webhooks/" + hook, Token: alice.Token, Body: map[string]any{"url": "ftp://x"}}
		}},
		{name: "another user's webhook", status: 403, req: func() req {
			return req{Method: "PUT", Path: "/v1/webhooks/" + hook, Token: bob.Token, Body: map[string]any{"description": "x"}}
		}},
		{name: "its secret rotated", status: 200, action: "webhook.secret_rotated", actor: alice.UserID,
			req: func() req {
				return req{Method: "POST", Path: "/v1/webhooks/" + hook + "/rotate-secret", Token: alice.Token}
			},
			after:  keepSecret,
			target: func() string { return hook }, changes: map[string]any{}},
		{name: "a delivery retried", status: 200, action: "delivery.retried", actor: alice.UserID,
			req: func() req {
				retried = failedDelivery()
				return req{Method: "POST", Path: "/v1/webhooks/" + hook + "/deliveries/" + retried + "/retry", Token: alice.Token}
			},
			target:  func() string { return retried },
			changes: map[string]any{"state": []any{"failed", "pending"}}},
		{name: "an unknown delivery", status: 404, req: func() req {
			return req{Method: "POST", Path: "/v1/webhooks/" + hook + "/deliveries/dlv_01jd0000000000000000000000/retry", Token: alice.Token}
		}},
		{name: "deliveries recovered by an admin", status: 200, action: "deliveries.recovered", actor: admin.UserID,
			req: func() req {
				failedDelivery()
				return req{Method: "POST", Path: "/v1/webhooks/" + hook + "/recover", Token: admin.Token,
					Body: map[string]any{"since": start.Format(time.RFC3339Nano)}}
			},
			target:  func() string { return hook },
			changes: map[string]any{"recovered": []any{nil, float64(1)}}},
		{name: "recover since the future", status: 400, req: func() req {
			return req{Method: "POST", Path: "/v1/webhooks/" + hook + "/recover", Token: alice.Token,
				Body: map[string]any{"since": time.Now().Add(time.Hour).Format(time.RFC3339Nano)}}
		}},
		{name: "a read-only key may not delete", status: 403, req: func() req {
			ro := env.NewKeyActor("alice@example.com", "", false, testutil.ReadOnly)
			return req{Method: "DELETE", Path: "/v1/webhooks/" + hook, Token: ro.Token}
		}},
		{name: "the webhook deleted", status: 200, action: "webhook.deleted", actor: alice.UserID,
			req: func() req {
				return req{Method: "DELETE", Path: "/v1/webhooks/" + hook, Token: alice.Token}
			},
			target: func() string { return hook },
			changes: map[string]any{"url": []any{"https://hooks.example.com/audit", nil}, "description": []any{"audited", nil},
				"events": []any{[]any{"item.created"}, nil}, "active": []any{true, nil}}},
		{name: "deleted again", status: 404, req: func() req {
			return req{Method: "DELETE", Path: "/v1/webhooks/" + hook, Token: alice.Token}
		}},

		// Items: an admin's change of another user's item is recorded; a
		// user's change of their own (an admin's too) is not administration.
		{name: "a user renames their own item", status: 200, req: func() req {
			item = env.CreateItem(bob, "Bob's")
			return req{Method: "PUT", Path: "/v1/items/" + item, Token: bob.Token, Body: map[string]any{"name": "Bob's own"}}
		}},
		{name: "an admin renames their own item", status: 200, req: func() req {
			return req{Method: "PUT", Path: "/v1/items/" + env.CreateItem(admin, "mine"), Token: admin.Token, Body: map[string]any{"name": "still mine"}}
		}},
		{name: "a user may not rename another's item", status: 403, req: func() req {
			return req{Method: "PUT", Path: "/v1/items/" + item, Token: alice.Token, Body: map[string]any{"name": "x"}}
		}},
		{name: "an admin renames and archives another user's item", status: 200, action: "item.updated", actor: admin.UserID,
			req: func() req {
				return req{Method: "PUT", Path: "/v1/items/" + item, Token: admin.Token,
					Body: map[string]any{"name": "renamed by the admin", "description": "", "status": "archived"}}
			},
			target:  func() string { return item },
			changes: map[string]any{"name": []any{"Bob's own", "renamed by the admin"}, "status": []any{"active", "archived"}}},
		{name: "an admin's change to the same values changes nothing", status: 200, req: func() req {
			return req{Method: "PUT", Path: "/v1/items/" + item, Token: admin.Token, Body: map[string]any{"status": "archived"}}
		}},
		{name: "an admin's stale If-Match", status: 412, req: func() req {
			return req{Method: "PUT", Path: "/v1/items/" + item, Token: admin.Token, Body: map[string]any{"name": "late"},
				Headers: map[string]string{"If-Match": `"1"`}}
		}},
		{name: "an admin deletes another user's item", status: 200, action: "item.deleted", actor: admin.UserID,
			req: func() req {
				return req{Method: "DELETE", Path: "/v1/items/" + item, Token: admin.Token}
			},
			target: func() string { return item },
			changes: map[string]any{"user_id": []any{bob.UserID, nil}, "name": []any{"renamed by the admin", nil},
				"description": []any{"", nil}, "status": []any{"archived", nil}, "created_at": []any{stamp, nil}, "updated_at": []any{stamp, nil}}},
		{name: "a user deletes their own item", status: 200, req: func() req {
			return req{Method: "DELETE", Path: "/v1/items/" + env.CreateItem(bob, "short-lived"), Token: bob.Token}
		}},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rq := row.req()
			log.fresh() // what the row's setup recorded (a key it made) is not its change
			id := fmt.Sprintf("audit-row-%d", i)
			if rq.Headers == nil {
				rq.Headers = map[string]string{}
			}
			rq.Headers["X-Request-ID"] = id
			r := env.Do(rq)
			if r.Status != row.status {
				t.Fatalf("status %d, want %d: %s", r.Status, row.status, r.Body)
			}
			if row.after != nil {
				row.after(r)
			}
			got := log.fresh()
			if row.action == "" {
				if len(got) != 0 {
					t.Fatalf("a refused change wrote %d records: %+v", len(got), got[0])
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d records, want exactly 1", len(got))
			}
			e := got[0]
			if e.Action != row.action || e.TargetID != row.target() {
				t.Errorf("action %s target %s, want %s %s", e.Action, e.TargetID, row.action, row.target())
			}
			if actor := strOr(e.ActorID); actor != row.actor {
				t.Errorf("actor %q, want %q", actor, row.actor)
			}
			if strOr(e.RequestID) != id {
				t.Errorf("request id %q, want %q", strOr(e.RequestID), id)
			}
			if !strings.HasPrefix(e.ID, "aud_") {
				t.Errorf("id %q", e.ID)
			}
			if ch := auditChanges(t, e.Changes); !reflect.DeepEqual(ch, row.changes) {
				t.Errorf("changes %v, want %v", ch, row.changes)
			}
		})
	}

	t.Run("no record carries a secret", func(t *testing.T) {
		all, err := env.App.DB.Client.AuditEvent.Query().All(sys)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := env.App.DB.Client.APIKey.Query().All(sys)
		if err != nil {
			t.Fatal(err)
		}
		banned := append([]string{"whsec_", "sk_live_", "sk_test_", "secret\"", "key_hash"}, secrets...)
		for _, k := range keys {
			banned = append(banned, k.KeyHash)
		}
		for _, e := range all {
			b, err := json.Marshal(e.Changes)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range banned {
				if strings.Contains(string(b), s) {
					t.Errorf("%s (%s) holds %q: %s", e.ID, e.Action, s, b)
				}
			}
		}
	})
}

// strOr is *s, "" for nil.
func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestAuditList: GET /v1/audit, a row per case of the contract: the admin,
// a user (403), a read-only key of an admin (reads), an expired key and a
// disabled admin (401), the filters, paging by cursor and each bad input.
func TestAuditList(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = 100 * time.Millisecond }))
	admin, alice := env.Admin, env.Alice
	ro := env.NewKeyActor("admin@example.com", "", true, testutil.ReadOnly)
	expired := env.NewKeyActor("admin@example.com", "", true, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
		return u.SetExpiresAt(time.Now().Add(time.Second))
	})
	gone := env.NewKeyActor("dave@example.com", "Dave", true, nil)
	// The fixtures' keys were recorded (key.created, by the system): this
	// test counts the records of its own changes only.
	if _, err := env.App.DB.Client.AuditEvent.Delete().Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if r := env.Do(testutil.Request{Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": fmt.Sprintf("u%d@example.com", i), "name": "U"}}); r.Status != 201 {
			t.Fatalf("create user: %d %s", r.Status, r.Body)
		}
	}
	for _, name := range []string{"Alice 1", "Alice 2"} {
		if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token,
			Body: map[string]any{"name": name}}); r.Status != 200 {
			t.Fatalf("rename: %d %s", r.Status, r.Body)
		}
	}
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/users/" + gone.UserID, Token: admin.Token,
		Body: map[string]any{"disabled": true}}); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: gone.Token}).Status == 401 &&
			env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: expired.Token}).Status == 401
	})
	// 5 users created and dave disabled by the admin, 2 renames by alice.
	const total = 8

	type record struct {
		ID        string
		Action    string
		TargetID  string  `json:"target_id"`
		ActorID   *string `json:"actor_id"`
		RequestID *string `json:"request_id"`
		Timestamp time.Time
		Changes   map[string][]any
	}
	page := func(t *testing.T, r *testutil.Response) ([]record, *string) {
		t.Helper()
		var env struct {
			Data []record
			Meta struct {
				Pagination struct {
					NextCursor *string `json:"next_cursor"`
				}
			}
		}
		testutil.MustJSON(t, r.Body, &env)
		return env.Data, env.Meta.Pagination.NextCursor
	}
	count := func(n int, each func(record) bool) func(t *testing.T, r *testutil.Response) {
		return func(t *testing.T, r *testutil.Response) {
			recs, next := page(t, r)
			if len(recs) != n || next != nil {
				t.Fatalf("%d records (next %v), want %d on one page: %s", len(recs), next, n, r.Body)
			}
			for i, e := range recs {
				if i > 0 && e.Timestamp.After(recs[i-1].Timestamp) {
					t.Errorf("not newest first at %d", i)
				}
				if each != nil && !each(e) {
					t.Errorf("record %+v", e)
				}
			}
		}
	}
	bad := func(name, query, field string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: "/v1/audit?" + query, Token: admin.Token,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"` + field + `"`}}
	}
	var itemCursor string
	env.CreateItem(alice, "a")
	env.CreateItem(alice, "b")
	if r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?limit=1", Token: alice.Token}); r.Status == 200 {
		var e struct {
			Meta struct {
				Pagination struct {
					NextCursor string `json:"next_cursor"`
				}
			}
		}
		testutil.MustJSON(t, r.Body, &e)
		itemCursor = e.Meta.Pagination.NextCursor
	}
	if itemCursor == "" {
		t.Fatal("no item cursor")
	}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "the admin reads the trail", Method: "GET", Path: "/v1/audit", Token: admin.Token, Status: 200,
			Contains: []string{`"action":"user.created"`, `"action":"user.updated"`, `"next_cursor":null`},
			Check: count(total, func(e record) bool {
				return strings.HasPrefix(e.ID, "aud_") && e.ActorID != nil && e.RequestID != nil && e.Changes != nil
			})},
		{Name: "a user may not", Method: "GET", Path: "/v1/audit", Token: alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a read-only key of an admin reads it", Method: "GET", Path: "/v1/audit", Token: ro.Token, Status: 200,
			Check: count(total, nil)},
		{Name: "an expired key", Method: "GET", Path: "/v1/audit", Token: expired.Token, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "a disabled admin", Method: "GET", Path: "/v1/audit", Token: gone.Token, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "no token", Method: "GET", Path: "/v1/audit", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "by actor", Method: "GET", Path: "/v1/audit?actor_id=" + alice.UserID, Token: admin.Token, Status: 200,
			Check: count(2, func(e record) bool { return *e.ActorID == alice.UserID && e.TargetID == alice.UserID })},
		{Name: "by action", Method: "GET", Path: "/v1/audit?action=user.created", Token: admin.Token, Status: 200,
			Check: count(5, func(e record) bool { return e.Action == "user.created" && *e.ActorID == admin.UserID })},
		{Name: "by actor and action", Method: "GET", Path: "/v1/audit?action=user.updated&actor_id=" + admin.UserID, Token: admin.Token,
			Status: 200, Check: count(1, func(e record) bool { return e.TargetID == gone.UserID })},
		{Name: "an actor with no records", Method: "GET", Path: "/v1/audit?actor_id=user_01jd0000000000000000000000", Token: admin.Token,
			Status: 200, Check: count(0, nil)},
		{Name: "an action with no records", Method: "GET", Path: "/v1/audit?action=webhook.secret_rotated", Token: admin.Token,
			Status: 200, Check: count(0, nil)},
		bad("an unknown action", "action=user.deleted", "action"),
		bad("an action in GraphQL's case", "action=USER_CREATED", "action"),
		bad("an actor that is not a user id", "actor_id=alice", "actor_id"),
		bad("a cursor this API did not issue", "cursor=garbage", "cursor"),
		bad("a cursor of another list", "cursor="+itemCursor, "cursor"),
		bad("a limit of 0", "limit=0", "limit"),
		bad("a limit over 100", "limit=101", "limit"),
		bad("a limit that is no number", "limit=ten", "limit"),
	})

	t.Run("pages by cursor", func(t *testing.T) {
		all := env.Do(testutil.Request{Method: "GET", Path: "/v1/audit", Token: admin.Token})
		want, _ := page(t, all)
		var got []record
		path := "/v1/audit?limit=3"
		for pages := 0; ; pages++ {
			if pages > total {
				t.Fatal("the pages never end")
			}
			r := env.Do(testutil.Request{Method: "GET", Path: path, Token: admin.Token})
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			recs, next := page(t, r)
			got = append(got, recs...)
			if next == nil {
				break
			}
			path = "/v1/audit?limit=3&cursor=" + *next
		}
		if len(got) != total {
			t.Fatalf("%d records over the pages, want %d", len(got), total)
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("record %d is %s over the pages, %s on one page", i, got[i].ID, want[i].ID)
			}
		}
	})
}

// TestAuditActionsDocumented holds the OpenAPI document's AuditAction to the
// service's actions, in their order.
func TestAuditActionsDocumented(t *testing.T) {
	b, err := os.ReadFile("openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct{ Enum []string }
		}
	}
	testutil.MustJSON(t, b, &doc)
	var want []string
	for _, a := range service.AuditActions {
		want = append(want, string(a))
	}
	if got := doc.Components.Schemas["AuditAction"].Enum; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("openapi.json's AuditAction %v, want %v (service.AuditActions)", got, want)
	}
}

// TestAuditPageCost: a page of the audit trail is one statement whatever
// its filters and cursor, and on SQLite that statement reads an index in
// the list's order (no scan of the table, no sort), so a page costs the
// same however long the trail.
func TestAuditPageCost(t *testing.T) {
	env, ql := newCountingEnv(t)
	for i := range 6 {
		if r := env.Do(testutil.Request{Method: "POST", Path: "/v1/users", Token: env.Admin.Token,
			Body: map[string]any{"email": fmt.Sprintf("c%d@example.com", i), "name": "C"}}); r.Status != 201 {
			t.Fatalf("create user: %d %s", r.Status, r.Body)
		}
	}
	first := env.Do(testutil.Request{Method: "GET", Path: "/v1/audit?limit=2", Token: env.Admin.Token})
	var e struct {
		Meta struct {
			Pagination struct {
				NextCursor string `json:"next_cursor"`
			}
		}
	}
	testutil.MustJSON(t, first.Body, &e)
	cursor := e.Meta.Pagination.NextCursor
	for _, query := range []string{
		"limit=2",
		"limit=2&cursor=" + cursor,
		"action=user.created&limit=2",
		"action=user.created&limit=2&cursor=" + cursor,
		"actor_id=" + env.Admin.UserID + "&limit=2",
		"actor_id=" + env.Admin.UserID + "&limit=2&cursor=" + cursor,
	} {
		t.Run(query, func(t *testing.T) {
			ql.take()
			if r := env.Do(testutil.Request{Method: "GET", Path: "/v1/audit?" + query, Token: env.Admin.Token}); r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			ql.mu.Lock()
			stmts, args := ql.queries, ql.args
			ql.mu.Unlock()
			if len(stmts) != 1 || len(args) != 1 {
				t.Fatalf("%d statements, want 1:\n%s", len(stmts), strings.Join(stmts, "\n"))
			}
			if testutil.OnPostgres() {
				return // a plan on a table this small says nothing of a large one
			}
			rows, err := ql.Driver.(*entsql.Driver).DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+stmts[0], args[0]...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			p := strings.Join(plan, "\n")
			// After a cursor the index is read from the cursor on, not from its start.
			ranged := !strings.Contains(query, "cursor=") || strings.Contains(p, "created_at<")
			if !strings.Contains(p, "INDEX auditevent_") || strings.Contains(p, "TEMP B-TREE") || !ranged {
				t.Errorf("the page does not read an index in its order:\n%s\n%s", p, stmts[0])
			}
		})
	}
}

// TestAuditRedactsWebhookURL: a webhook URL carrying credentials (a user
// and password, query values) is kept in audit records with them redacted,
// on its creation, a change of URL and its deletion, while its owner still
// reads it whole through GET /v1/webhooks/{id} and GraphQL's webhook(id).
func TestAuditRedactsWebhookURL(t *testing.T) {
	env := webhookEnv(t)
	alice := env.Alice
	log := newAuditLog(t, env)
	const first = "https://hookuser:pa55w0rd@hooks.example.com/in?token=t0ken-s3cret&v=2"
	const second = "https://hooks.example.com/in?sig=0th3r-s3cret"
	hook := createWebhook(t, env, alice, first)
	for _, tc := range []struct {
		name    string
		req     *testutil.Request
		changes map[string]any
	}{
		{"created", nil, map[string]any{"url": []any{nil, "https://REDACTED:REDACTED@hooks.example.com/in?token=REDACTED&v=REDACTED"}}},
		{"url changed", &testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + hook, Token: alice.Token, Body: map[string]any{"url": second}},
			map[string]any{"url": []any{"https://REDACTED:REDACTED@hooks.example.com/in?token=REDACTED&v=REDACTED", "https://hooks.example.com/in?sig=REDACTED"}}},
		{"deleted", &testutil.Request{Method: "DELETE", Path: "/v1/webhooks/" + hook, Token: alice.Token},
			map[string]any{"url": []any{"https://hooks.example.com/in?sig=REDACTED", nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req != nil {
				if tc.req.Method == "DELETE" {
					// The owner reads the URL whole, on both APIs.
					r := env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + hook, Token: alice.Token})
					var w struct{ URL string }
					r.Data(t, &w)
					g := testutil.GQL(t, env, alice.Token, `query($id: ID!) { webhook(id: $id) { url } }`, map[string]any{"id": hook}).OK(t)
					if w.URL != second || g.At(t, "webhook", "url") != second {
						t.Fatalf("the owner reads %q (REST) and %v (GraphQL), want %q", w.URL, g.At(t, "webhook", "url"), second)
					}
				}
				if r := env.Do(*tc.req); r.Status != 200 {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
			}
			got := log.fresh()
			if len(got) != 1 {
				t.Fatalf("%d records, want 1", len(got))
			}
			ch := auditChanges(t, got[0].Changes)
			if !reflect.DeepEqual(ch["url"], tc.changes["url"]) {
				t.Errorf("url %v, want %v", ch["url"], tc.changes["url"])
			}
			b, _ := json.Marshal(got[0].Changes)
			for _, secret := range []string{"pa55w0rd", "t0ken-s3cret", "0th3r-s3cret", "hookuser"} {
				if strings.Contains(string(b), secret) {
					t.Errorf("the record holds %q: %s", secret, b)
				}
			}
		})
	}
}
