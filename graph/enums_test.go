package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestEnumSpelling pins GraphQL's spelling of ent's enums: upper case in
// every direction GraphQL has (a field's value, a mutation's input, a where
// filter, literal or variable, a subscription's item), while REST, the event
// feed and the database keep the lower-case values of the spec. A value in
// REST's spelling is refused by GraphQL, naming its field.
func TestEnumSpelling(t *testing.T) {
	env := testutil.New(t)
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	before := env.CreateItem(env.Alice, "before") // an event to resume after
	env.WaitPublished()
	var feed struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	testutil.MustJSON(t, env.Do(testutil.Request{Method: "GET", Path: "/v1/events", Token: env.Alice.Token}).Body, &feed)
	if len(feed.Data) != 1 {
		t.Fatalf("alice's feed holds %d events, want 1 (the create of %s)", len(feed.Data), before)
	}
	after := feed.Data[0].ID

	r := testutil.GQL(t, env, env.Alice.Token, `mutation { createItem(input: {name: "Lamp", status: ARCHIVED}) { id status } }`, nil).OK(t)
	id := r.At(t, "createItem", "id").(string)
	if got := r.At(t, "createItem", "status"); got != "ARCHIVED" {
		t.Fatalf("createItem answered status %v, want ARCHIVED", got)
	}
	restStatus := func() any {
		var it map[string]any
		env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}).Data(t, &it)
		return it["status"]
	}
	if got := restStatus(); got != "archived" {
		t.Fatalf("REST shows status %v, want archived", got)
	}
	env.WaitPublished()
	events := env.Do(testutil.Request{Method: "GET", Path: "/v1/events", Token: env.Alice.Token})
	if !bytes.Contains(events.Body, []byte(`"status":"archived"`)) || bytes.Contains(events.Body, []byte("ARCHIVED")) {
		t.Fatalf("the REST event feed does not say archived: %s", events.Body)
	}

	t.Run("query output", func(t *testing.T) {
		r := testutil.GQL(t, env, env.Alice.Token, `query($id: ID!) { item(id: $id) { status } node(id: $id) { ... on Item { status } } me { role } }`, map[string]any{"id": id}).OK(t)
		if r.At(t, "item", "status") != "ARCHIVED" || r.At(t, "node", "status") != "ARCHIVED" || r.At(t, "me", "role") != "USER" {
			t.Fatalf("want ARCHIVED and USER: %s", r.Raw)
		}
		r = testutil.GQL(t, env, env.Admin.Token, `{ me { role } }`, nil).OK(t)
		if r.At(t, "me", "role") != "ADMIN" {
			t.Fatalf("want ADMIN: %s", r.Raw)
		}
		var me map[string]any
		env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Admin.Token}).Data(t, &me)
		if me["role"] != "admin" {
			t.Fatalf("REST shows role %v, want admin", me["role"])
		}
	})

	t.Run("where filter", func(t *testing.T) {
		for _, c := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"literal", `{ items(where: {status: ARCHIVED}) { edges { node { id } } } }`, nil},
			{"literal list", `{ items(where: {statusIn: [ARCHIVED]}) { edges { node { id } } } }`, nil},
			{"literal not equal", `{ items(where: {statusNEQ: ACTIVE}) { edges { node { id } } } }`, nil},
			{"variable", `query($s: ItemStatus) { items(where: {status: $s}) { edges { node { id } } } }`, map[string]any{"s": "ARCHIVED"}},
			{"variable where", `query($w: ItemWhereInput) { items(where: $w) { edges { node { id } } } }`, map[string]any{"w": map[string]any{"statusIn": []string{"ARCHIVED"}}}},
		} {
			r := testutil.GQL(t, env, env.Alice.Token, c.query, c.vars).OK(t)
			if got := r.IDs(t, "items"); len(got) != 1 || got[0] != id {
				t.Errorf("%s: items %v, want only %s", c.name, got, id)
			}
		}
		r := testutil.GQL(t, env, env.Admin.Token, `{ users(where: {role: ADMIN}) { edges { node { role } } } }`, nil).OK(t)
		if edges := r.At(t, "users", "edges").([]any); len(edges) != 1 {
			t.Errorf("users with role ADMIN: %s", r.Raw)
		}
	})

	t.Run("input", func(t *testing.T) {
		r := testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!, $in: UpdateItemInput!) { updateItem(id: $id, input: $in) { status } }`,
			map[string]any{"id": id, "in": map[string]any{"status": "ACTIVE"}}).OK(t)
		if r.At(t, "updateItem", "status") != "ACTIVE" || restStatus() != "active" {
			t.Fatalf("updateItem to ACTIVE: %s; REST shows %v", r.Raw, restStatus())
		}
	})

	t.Run("REST's spelling refused", func(t *testing.T) {
		for _, c := range []struct {
			name, query string
			vars        map[string]any
			field       string
		}{
			{"literal filter", `{ items(where: {status: archived}) { totalCount } }`, nil, "status"},
			{"variable filter", `query($s: ItemStatus) { items(where: {status: $s}) { totalCount } }`, map[string]any{"s": "archived"}, "status"},
			{"variable in a where", `query($w: ItemWhereInput) { items(where: $w) { totalCount } }`, map[string]any{"w": map[string]any{"statusIn": []string{"ACTIVE", "archived"}}}, "statusIn"},
			{"input", `mutation($in: CreateItemInput!) { createItem(input: $in) { id } }`, map[string]any{"in": map[string]any{"name": "n", "status": "active"}}, "status"},
			{"role", `{ users(where: {roleIn: [admin]}) { totalCount } }`, nil, "roleIn"},
		} {
			r := testutil.GQL(t, env, env.Admin.Token, c.query, c.vars)
			if r.Code() != "VALIDATION_ERROR" || r.Data != nil && r.Data["createItem"] != nil {
				t.Errorf("%s: want VALIDATION_ERROR: %s", c.name, r.Raw)
				continue
			}
			ext := r.Errors[0].Extensions
			want := "must be one of: ACTIVE, ARCHIVED"
			if c.field == "roleIn" {
				want = "must be one of: USER, ADMIN"
			}
			if ext["field"] != c.field || ext["reason"] != want {
				t.Errorf("%s: field %v reason %v, want %s and %q: %s", c.name, ext["field"], ext["reason"], c.field, want, r.Raw)
			}
		}
	})

	t.Run("subscription", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp := testutil.PostSSE(ctx, t, srv, env.Alice.Token,
			`subscription($after: ID) { itemEvents(after: $after) { type item { id status owner { role } } } }`,
			map[string]any{"after": after})
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Data struct {
					ItemEvents struct {
						Type string
						Item struct {
							ID, Status string
							Owner      struct{ Role string }
						}
					}
				}
			}
			testutil.MustJSON(t, []byte(data), &ev)
			e := ev.Data.ItemEvents
			if e.Type != "CREATED" || e.Item.ID != id || e.Item.Status != "ARCHIVED" || e.Item.Owner.Role != "USER" {
				t.Fatalf("the first event after %s: %s; want the creation of %s, ARCHIVED, owned by a USER", after, data, id)
			}
			return
		}
		t.Fatalf("the stream ended without an event: %v", sc.Err())
	})
}
