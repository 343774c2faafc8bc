package webhook_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// change is one way of changing an item: it makes the change and returns the
// item id, the event it must emit, and the item as the event must carry it.
type change func(t *testing.T, env *testutil.Env) (itemID, event string, want map[string]any)

// restItem decodes the data of an item response.
func restItem(t *testing.T, r *testutil.Response) map[string]any {
	t.Helper()
	var m map[string]any
	r.Data(t, &m)
	return m
}

// serviceItem renders an item as REST does.
func serviceItem(t *testing.T, it any) map[string]any {
	t.Helper()
	data, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// gqlItemFields are the item fields a GraphQL mutation selects, named as REST names them.
const gqlItemFields = `id name description status user_id: userID created_at: createdAt updated_at: updatedAt`

// gqlItem runs a GraphQL operation as alice and returns the item at field,
// its status in REST's spelling (GraphQL's ARCHIVED is the payload's
// archived: docs/graphql.md, Enums).
func gqlItem(t *testing.T, env *testutil.Env, query string, vars map[string]any, field string) map[string]any {
	t.Helper()
	r := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token,
		Body: map[string]any{"query": query, "variables": vars}})
	var out struct {
		Data   map[string]map[string]any `json:"data"`
		Errors []any                     `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Errors) > 0 || out.Data[field] == nil {
		t.Fatalf("GraphQL %s: %d %s", field, r.Status, r.Body)
	}
	it := out.Data[field]
	if s, ok := it["status"].(string); ok {
		it["status"] = strings.ToLower(s)
	}
	return it
}

// changes are the ways to change an item: REST, GraphQL and direct
// service calls all emit the same events.
var changes = []struct {
	name   string
	change change
}{
	{"REST create", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token,
			Body: map[string]any{"name": "via REST", "description": "d"}})
		it := restItem(t, r)
		return it["id"].(string), "item.created", it
	}},
	{"REST update", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "before")
		r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token,
			Body: map[string]any{"name": "after", "status": "archived"}})
		return id, "item.updated", restItem(t, r)
	}},
	{"REST delete carries the item as it was", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "doomed")
		was := restItem(t, env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}))
		r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token})
		if r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		return id, "item.deleted", was
	}},
	{"GraphQL create", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		it := gqlItem(t, env, `mutation($in: CreateItemInput!) { createItem(input: $in) { `+gqlItemFields+` } }`,
			map[string]any{"in": map[string]any{"name": "via GraphQL", "description": "g"}}, "createItem")
		return it["id"].(string), "item.created", it
	}},
	{"GraphQL update", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "before")
		it := gqlItem(t, env, `mutation($id: ID!, $in: UpdateItemInput!) { updateItem(id: $id, input: $in) { `+gqlItemFields+` } }`,
			map[string]any{"id": id, "in": map[string]any{"status": "ARCHIVED"}}, "updateItem")
		return id, "item.updated", it
	}},
	{"GraphQL delete carries the item as it was", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "doomed")
		was := restItem(t, env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}))
		r := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token,
			Body: map[string]any{"query": `mutation($id: ID!) { deleteItem(id: $id) }`, "variables": map[string]any{"id": id}}})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"deleteItem":"`+id+`"`) {
			t.Fatalf("GraphQL delete: %d %s", r.Status, r.Body)
		}
		return id, "item.deleted", was
	}},
	{"service create", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		it, err := env.App.Service.CreateItem(as(env.Alice, false), ent.CreateItemInput{Name: "via service"})
		if err != nil {
			t.Fatal(err)
		}
		return it.ID, "item.created", serviceItem(t, resource.NewItem(it))
	}},
	{"service update", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "before")
		it, err := env.App.Service.UpdateItem(as(env.Alice, false), id, ent.UpdateItemInput{Description: new("changed")})
		if err != nil {
			t.Fatal(err)
		}
		return id, "item.updated", serviceItem(t, resource.NewItem(it))
	}},
	{"service delete", func(t *testing.T, env *testutil.Env) (string, string, map[string]any) {
		id := env.CreateItem(env.Alice, "doomed")
		it, err := env.App.Service.GetItem(as(env.Alice, false), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.App.Service.DeleteItem(as(env.Alice, false), id); err != nil {
			t.Fatal(err)
		}
		return id, "item.deleted", serviceItem(t, resource.NewItem(it))
	}},
}

// TestEventsReachReceiver: every kind of item change reaches the owner's
// endpoint and an admin's, signed (verified with the Standard Webhooks
// library), with the body of DESIGN §4.
func TestEventsReachReceiver(t *testing.T) {
	env := testutil.New(t, fastWebhooks())
	start(t, env)
	rc := newReceiver(t)
	_, secret := register(t, env, env.Alice, rc.URL+"/alice")
	_, adminSecret := register(t, env, env.Admin, rc.URL+"/admin")

	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			itemID, typ, want := c.change(t, env)
			got := map[string]received{}
			for len(got) < 2 {
				r := rc.waitFor(t, 10*time.Second, eventIs(typ, itemID))
				got[r.Path] = r
			}
			for path, r := range got {
				s := secret
				if path == "/admin" {
					s = adminSecret
				}
				verify(t, s, r)
				p := r.payload(t)
				if keys := slices.Sorted(maps.Keys(p)); !slices.Equal(keys, []string{"data", "event", "id", "timestamp"}) {
					t.Errorf("payload keys = %v", keys)
				}
				if p["id"] != r.Header.Get(webhook.HeaderID) {
					t.Errorf("body id %v != webhook-id %q", p["id"], r.Header.Get(webhook.HeaderID))
				}
				if id, _ := p["id"].(string); len(id) < 5 || id[:4] != "evt_" {
					t.Errorf("event id = %v, want evt_…", p["id"])
				}
				if _, err := time.Parse(time.RFC3339Nano, p["timestamp"].(string)); err != nil {
					t.Errorf("timestamp %v: %v", p["timestamp"], err)
				}
				if ts, err := strconv.ParseInt(r.Header.Get(webhook.HeaderTimestamp), 10, 64); err != nil || time.Since(time.Unix(ts, 0)) > time.Minute {
					t.Errorf("webhook-timestamp = %q", r.Header.Get(webhook.HeaderTimestamp))
				}
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q", ct)
				}
				data, _ := p["data"].(map[string]any)
				if !maps.Equal(data, want) {
					t.Errorf("data = %v\nwant  %v", data, want)
				}
			}
		})
	}
}
