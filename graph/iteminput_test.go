package graph_test

import (
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestItemInputs: createItem's input requires name in the schema, so an
// input without one is refused before the operation runs (no item, no
// path into the operation: the service is never called), naming the field with REST's reason;
// updateItem's input requires nothing, and what it leaves out stays.
func TestItemInputs(t *testing.T) {
	env := testutil.New(t)
	const create = `mutation($in: CreateItemInput!) { createItem(input: $in) { id } }`

	refused := []struct {
		name  string
		query string
		vars  map[string]any
		field string
		why   string
	}{
		{"empty literal", `mutation { createItem(input: {}) { id } }`, nil, "name", "is required"},
		{"literal without name", `mutation { createItem(input: {description: "d"}) { id } }`, nil, "name", "is required"},
		{"literal null name", `mutation { createItem(input: {name: null}) { id } }`, nil, "name", ""},
		{"empty variable", create, map[string]any{"in": map[string]any{}}, "name", "is required"},
		{"variable without name", create, map[string]any{"in": map[string]any{"status": "active"}}, "name", "is required"},
		{"variable null name", create, map[string]any{"in": map[string]any{"name": nil}}, "name", ""},
		{"update input on create", `mutation($in: UpdateItemInput!) { createItem(input: $in) { id } }`, map[string]any{"in": map[string]any{"name": "n"}}, "", ""},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, env, env.Alice.Token, c.query, c.vars)
			if r.Status != 200 || len(r.Errors) != 1 || r.Code() != "VALIDATION_ERROR" || r.Data != nil {
				t.Fatalf("want one VALIDATION_ERROR refusing the operation: %d %s", r.Status, r.Raw)
			}
			if p := r.Errors[0].Path; len(p) > 0 && p[0] != "variable" {
				t.Fatalf("refused at %v, in the operation rather than before it: %s", p, r.Raw)
			}
			ext := r.Errors[0].Extensions
			if c.field != "" && ext["field"] != c.field {
				t.Errorf("field %v, want %s: %s", ext["field"], c.field, r.Raw)
			}
			if c.why != "" && ext["reason"] != c.why {
				t.Errorf("reason %v, want %s: %s", ext["reason"], c.why, r.Raw)
			}
		})
	}
	if res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items", Token: env.Alice.Token}); !strings.Contains(string(res.Body), `"total":0`) {
		t.Fatalf("a refused createItem made an item: %s", res.Body)
	}

	id := env.CreateItem(env.Alice, "Lamp")
	r := testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {}) { name description } }`, map[string]any{"id": id}).OK(t)
	if r.At(t, "updateItem", "name") != "Lamp" {
		t.Fatalf("an empty update changed the item: %s", r.Raw)
	}
	r = testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {name: null, description: "oak"}) { name description } }`, map[string]any{"id": id}).OK(t)
	if r.At(t, "updateItem", "name") != "Lamp" || r.At(t, "updateItem", "description") != "oak" {
		t.Fatalf("a null name was not left as it is: %s", r.Raw)
	}
}
