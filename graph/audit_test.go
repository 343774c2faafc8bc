package graph_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestAuditEvents: GraphQL's auditEvents, a row per case of the contract:
// the admin, a user (PERMISSION_DENIED), a read-only key of an admin
// (reads), an expired key and a disabled admin (UNAUTHORIZED), the filters,
// paging by cursor, totalCount and each bad input; and a mutation over
// GraphQL records its change as REST's does.
func TestAuditEvents(t *testing.T) {
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
	for i := range 3 {
		testutil.GQL(t, env, admin.Token, `mutation($e: String!) { createUser(input: {email: $e, name: "U"}) { id } }`,
			map[string]any{"e": fmt.Sprintf("u%d@example.com", i)}).OK(t)
	}
	testutil.GQL(t, env, alice.Token, `mutation($id: ID!) { updateUser(id: $id, input: {name: "Alice A."}) { id } }`,
		map[string]any{"id": alice.UserID}).OK(t)
	testutil.GQL(t, env, admin.Token, `mutation($id: ID!) { updateUser(id: $id, input: {disabled: true}) { id } }`,
		map[string]any{"id": gone.UserID}).OK(t)
	testutil.Eventually(t, 5*time.Second, func() bool {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: gone.Token}).Status == 401 &&
			env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: expired.Token}).Status == 401
	})
	const total = 5 // 3 users created and dave disabled by the admin, alice's rename
	itemCursor := func() any {
		env.CreateItem(alice, "a")
		return testutil.GQL(t, env, alice.Token, `{ items(first: 1) { edges { cursor } } }`, nil).OK(t).At(t, "items", "edges", 0, "cursor")
	}()
	const page = `query($actor: ID, $action: AuditAction, $after: Cursor, $first: Int) {
		auditEvents(actorID: $actor, action: $action, after: $after, first: $first) {
			totalCount pageInfo { hasNextPage endCursor }
			edges { cursor node { id actorID action targetID requestID createdAt changes { field before after } } } } }`
	nodes := func(t *testing.T, r testutil.GQLResponse) []map[string]any {
		var out []map[string]any
		for _, e := range r.At(t, "auditEvents", "edges").([]any) {
			out = append(out, e.(map[string]any)["node"].(map[string]any))
		}
		return out
	}
	count := func(n int, each func(map[string]any) bool) func(t *testing.T, r testutil.GQLResponse) {
		return func(t *testing.T, r testutil.GQLResponse) {
			got := nodes(t, r)
			if len(got) != n || r.At(t, "auditEvents", "totalCount") != float64(n) {
				t.Fatalf("%d records, want %d: %s", len(got), n, r.Raw)
			}
			for i, e := range got {
				if i > 0 && e["createdAt"].(string) > got[i-1]["createdAt"].(string) {
					t.Errorf("not newest first at %d", i)
				}
				if each != nil && !each(e) {
					t.Errorf("record %v", e)
				}
			}
		}
	}
	rows := []struct {
		name  string
		token string
		vars  map[string]any
		query string // default: page
		code  string // "" on success
		field string
		check func(t *testing.T, r testutil.GQLResponse)
	}{
		{name: "the admin reads the trail", token: admin.Token, check: count(total, nil)},
		{name: "a user may not", token: alice.Token, code: "PERMISSION_DENIED"},
		{name: "a read-only key of an admin reads it", token: ro.Token, check: count(total, nil)},
		{name: "an expired key", token: expired.Token, code: "TOKEN_EXPIRED"},
		{name: "a disabled admin", token: gone.Token, code: "UNAUTHORIZED"},
		{name: "by actor", token: admin.Token, vars: map[string]any{"actor": alice.UserID},
			check: count(1, func(e map[string]any) bool {
				ch := e["changes"].([]any)[0].(map[string]any)
				return e["actorID"] == alice.UserID && e["action"] == "USER_UPDATED" && e["targetID"] == alice.UserID &&
					ch["field"] == "name" && ch["before"] == `"Alice"` && ch["after"] == `"Alice A."` && e["requestID"] != nil
			})},
		{name: "by action", token: admin.Token, vars: map[string]any{"action": "USER_CREATED"},
			check: count(3, func(e map[string]any) bool {
				for _, c := range e["changes"].([]any) {
					if c := c.(map[string]any); c["before"] != nil {
						return false // nothing was there before a creation
					}
				}
				return e["actorID"] == admin.UserID && len(e["changes"].([]any)) == 4
			})},
		{name: "by actor and action", token: admin.Token, vars: map[string]any{"actor": admin.UserID, "action": "USER_UPDATED"},
			check: count(1, func(e map[string]any) bool { return e["targetID"] == gone.UserID })},
		{name: "an action with no records", token: admin.Token, vars: map[string]any{"action": "KEY_REVOKED"}, check: count(0, nil)},
		{name: "an unknown action", token: admin.Token, vars: map[string]any{"action": "USER_DELETED"}, code: "VALIDATION_ERROR", field: "action"},
		{name: "an action in REST's spelling", token: admin.Token, vars: map[string]any{"action": "user.created"}, code: "VALIDATION_ERROR", field: "action"},
		{name: "an actor that is not a user id", token: admin.Token, vars: map[string]any{"actor": "alice"}, code: "VALIDATION_ERROR", field: "actorID"},
		{name: "not a cursor", token: admin.Token, vars: map[string]any{"after": "abc"}, code: "VALIDATION_ERROR", field: "after"},
		{name: "an item's cursor", token: admin.Token, vars: map[string]any{"after": itemCursor}, code: "VALIDATION_ERROR", field: "after"},
		{name: "first over 100", token: admin.Token, vars: map[string]any{"first": 101}, code: "VALIDATION_ERROR", field: "first"},
		{name: "first below 0", token: admin.Token, vars: map[string]any{"first": -1}, code: "VALIDATION_ERROR", field: "first"},
		{name: "first 0: a page of none, with what follows", token: admin.Token, vars: map[string]any{"first": 0},
			check: func(t *testing.T, r testutil.GQLResponse) {
				if len(nodes(t, r)) != 0 || r.At(t, "auditEvents", "pageInfo", "hasNextPage") != true || r.At(t, "auditEvents", "totalCount") != float64(total) {
					t.Errorf("%s", r.Raw)
				}
			}},
		{name: "without totalCount", token: admin.Token, query: `{ auditEvents(first: 2) { edges { node { id } } } }`,
			check: func(t *testing.T, r testutil.GQLResponse) {
				if len(r.IDs(t, "auditEvents")) != 2 {
					t.Errorf("%s", r.Raw)
				}
			}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			q := row.query
			if q == "" {
				q = page
			}
			r := testutil.GQL(t, env, row.token, q, row.vars)
			if row.code == "" {
				r.OK(t)
			} else {
				if r.Code() != row.code {
					t.Fatalf("want %s: %s", row.code, r.Raw)
				}
				if row.field != "" && r.Errors[0].Extensions["field"] != row.field {
					t.Fatalf("want field %s: %s", row.field, r.Raw)
				}
			}
			if row.check != nil {
				row.check(t, r)
			}
		})
	}

	t.Run("pages by cursor, as REST's", func(t *testing.T) {
		all := testutil.GQL(t, env, admin.Token, page, nil).OK(t)
		want := all.IDs(t, "auditEvents")
		var got []string
		vars := map[string]any{"first": 2}
		for pages := 0; ; pages++ {
			if pages > total {
				t.Fatal("the pages never end")
			}
			r := testutil.GQL(t, env, admin.Token, page, vars).OK(t)
			got = append(got, r.IDs(t, "auditEvents")...)
			if r.At(t, "auditEvents", "pageInfo", "hasNextPage") != true {
				break
			}
			vars["after"] = r.At(t, "auditEvents", "pageInfo", "endCursor")
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("over the pages %v, on one page %v", got, want)
		}
		rest := env.Do(testutil.Request{Method: "GET", Path: "/v1/audit", Token: admin.Token})
		var body struct{ Data []struct{ ID string } }
		testutil.MustJSON(t, rest.Body, &body)
		var restIDs []string
		for _, e := range body.Data {
			restIDs = append(restIDs, e.ID)
		}
		if fmt.Sprint(restIDs) != fmt.Sprint(want) {
			t.Fatalf("REST lists %v, GraphQL %v", restIDs, want)
		}
	})
}

// TestAuditActionSpelling holds GraphQL's enum AuditAction to the service's
// actions: the same set, each upper case with _ for the dot.
func TestAuditActionSpelling(t *testing.T) {
	var want []string
	for _, a := range service.AuditActions {
		want = append(want, strings.ToUpper(strings.ReplaceAll(string(a), ".", "_")))
	}
	var got []string
	for _, a := range model.AllAuditAction {
		got = append(got, string(a))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("GraphQL's AuditAction %v, want %v (service.AuditActions)", got, want)
	}
}

// stamp stands for any timestamp in a literal of changes.
const stamp = "<timestamp>"

// TestAuditItemChanges: over GraphQL, as over REST, an admin's updateItem
// or deleteItem of another user's item writes one audit record
// (ITEM_UPDATED with the changed fields, ITEM_DELETED with the item as it
// was), read back through auditEvents; a user's change of their own item,
// an admin's of their own, and a refused change write none.
func TestAuditItemChanges(t *testing.T) {
	env := testutil.New(t)
	admin, alice, bob := env.Admin, env.Alice, env.Bob
	if _, err := env.App.DB.Client.AuditEvent.Delete().Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	const update = `mutation($id: ID!, $name: String, $status: ItemStatus) {
		updateItem(id: $id, input: {name: $name, status: $status}) { id } }`
	const remove = `mutation($id: ID!) { deleteItem(id: $id) }`
	alices, bobs, admins := env.CreateItem(alice, "Alice's"), env.CreateItem(bob, "Bob's"), env.CreateItem(admin, "mine")
	rows := []struct {
		name, token, query string
		vars               map[string]any
		code               string // "" on success
		action             string // "": no record
		changes            map[string][2]any
	}{
		{name: "a user renames their own item", token: bob.Token, query: update,
			vars: map[string]any{"id": bobs, "name": "Bob's own"}},
		{name: "an admin renames their own item", token: admin.Token, query: update,
			vars: map[string]any{"id": admins, "name": "still mine"}},
		{name: "a user may not rename another's", token: bob.Token, query: update,
			vars: map[string]any{"id": alices, "name": "x"}, code: "PERMISSION_DENIED"},
		{name: "an admin renames and archives another user's item", token: admin.Token, query: update,
			vars:   map[string]any{"id": alices, "name": "renamed", "status": "ARCHIVED"},
			action: "ITEM_UPDATED", changes: map[string][2]any{"name": {`"Alice's"`, `"renamed"`}, "status": {`"active"`, `"archived"`}}},
		{name: "an admin's change to the same values", token: admin.Token, query: update,
			vars: map[string]any{"id": alices, "name": "renamed"}},
		{name: "a user deletes their own item", token: bob.Token, query: remove, vars: map[string]any{"id": bobs}},
		{name: "an admin deletes another user's item", token: admin.Token, query: remove, vars: map[string]any{"id": alices},
			action: "ITEM_DELETED", changes: map[string][2]any{"user_id": {`"` + alice.UserID + `"`, nil},
				"name": {`"renamed"`, nil}, "description": {`""`, nil}, "status": {`"archived"`, nil},
				"created_at": {stamp, nil}, "updated_at": {stamp, nil}}},
	}
	// A timestamp's before (a JSON string, as the schema's changes carry
	// values) compares as stamp.
	timestamp := regexp.MustCompile(`^"\d{4}-\d\d-\d\dT[^"]+Z"$`)
	seen := 0
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := testutil.GQL(t, env, row.token, row.query, row.vars)
			if row.code != "" {
				if r.Code() != row.code {
					t.Fatalf("want %s: %s", row.code, r.Raw)
				}
			} else {
				r.OK(t)
			}
			trail := testutil.GQL(t, env, admin.Token, `{ auditEvents(first: 100) { edges { node {
				actorID action targetID changes { field before after } } } } }`, nil).OK(t)
			edges := trail.At(t, "auditEvents", "edges").([]any)
			fresh := len(edges) - seen
			seen = len(edges)
			if row.action == "" {
				if fresh != 0 {
					t.Fatalf("%d records, want none: %s", fresh, trail.Raw)
				}
				return
			}
			if fresh != 1 {
				t.Fatalf("%d records, want 1: %s", fresh, trail.Raw)
			}
			e := edges[0].(map[string]any)["node"].(map[string]any)
			if e["action"] != row.action || e["actorID"] != admin.UserID || e["targetID"] != row.vars["id"] {
				t.Errorf("record %v, want %s by the admin on %s", e, row.action, row.vars["id"])
			}
			got := map[string][2]any{}
			for _, c := range e["changes"].([]any) {
				c := c.(map[string]any)
				before := c["before"]
				if b, ok := before.(string); ok && timestamp.MatchString(b) {
					before = stamp
				}
				got[c["field"].(string)] = [2]any{before, c["after"]}
			}
			if fmt.Sprint(got) != fmt.Sprint(row.changes) {
				t.Errorf("changes %v, want %v", got, row.changes)
			}
		})
	}
}
