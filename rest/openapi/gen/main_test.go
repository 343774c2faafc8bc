package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"

	"entgo.io/ent/entc/gen"
	"entgo.io/ent/schema/field"

	"github.com/acme/itemsvc/ent/schema/api"
	"github.com/acme/itemsvc/internal/service"
)

var graph = sync.OnceValues(func() (*gen.Graph, error) { return loadGraph("../../../ent/schema") })

// item loads the graph once and returns it with its Item type.
func item(t *testing.T) (*gen.Graph, *gen.Type) {
	t.Helper()
	g, err := graph()
	if err != nil {
		t.Fatal(err)
	}
	it := findType(g.Nodes, "Item")
	if it == nil {
		t.Fatal("no Item in ent/schema")
	}
	return g, it
}

// decoded reads a document as plain JSON, for comparisons.
func decoded(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func section(doc map[string]any, name string) map[string]any {
	s, _ := doc["components"].(map[string]any)[name].(map[string]any)
	return s
}

// TestServedDocumentIsGenerated: the served document is the skeleton plus
// what the generator makes of ent/schema, byte for byte (go generate ./rest
// after a change of either), and every property of Item, of its request
// bodies and every generated list parameter comes from the generator: the
// skeleton has none of them.
func TestServedDocumentIsGenerated(t *testing.T) {
	g, it := item(t)
	skeleton, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	served, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := build(skeleton, g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, want) {
		t.Error("rest/openapi/openapi.json is not what the generator writes: run go generate ./rest (edit skeleton.json or ent/schema, never openapi.json)")
	}

	c, err := components(it, g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	sk, doc := decoded(t, skeleton), decoded(t, served)
	for _, sec := range []struct {
		name string
		gen  *object
	}{{"schemas", c.schemas}, {"parameters", c.parameters}} {
		for _, name := range sec.gen.keys {
			if _, ok := section(sk, sec.name)[name]; ok {
				t.Errorf("skeleton.json defines components.%s.%s, which ent/schema declares", sec.name, name)
			}
			if _, ok := section(doc, sec.name)[name]; !ok {
				t.Errorf("openapi.json lacks the generated components.%s.%s", sec.name, name)
			}
		}
	}
	for _, name := range []string{"Item", "ItemCreate", "ItemUpdate", "ItemStatus"} {
		if _, ok := c.schemas.get(name); !ok {
			t.Errorf("the generator makes no %s", name)
		}
	}
	for _, name := range []string{"sort", "status", "user_id"} {
		if _, ok := c.parameters.get(name); !ok {
			t.Errorf("the generator makes no list parameter %s", name)
		}
	}
}

// TestItemBoundsAreTheService: the lengths ent/schema/item.go states are
// those the service checks.
func TestItemBoundsAreTheService(t *testing.T) {
	g, it := item(t)
	c, err := components(it, g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	props := mustJSON(t, c.schemas.obj("Item").obj("properties"))
	for name, max := range map[string]int{"name": service.MaxNameLen, "description": service.MaxDescriptionLen} {
		got := props[name].(map[string]any)["maxLength"]
		if got != float64(max) {
			t.Errorf("Item.%s maxLength = %v, the service allows %d: fix api.Length in ent/schema/item.go", name, got, max)
		}
	}
}

// TestAddedFieldAppears: fields added to Item show where their declaration
// says, without touching the skeleton.
func TestAddedFieldAppears(t *testing.T) {
	g, base := item(t)
	it := *base
	it.Fields = slices.Clone(base.Fields)
	str := &field.TypeInfo{Type: field.TypeString}
	it.Fields = append(it.Fields,
		// A plain field: shown, settable, required on create.
		&gen.Field{Name: "color", Type: str},
		// A field with a default, sortable and a filter.
		&gen.Field{Name: "rank", Type: &field.TypeInfo{Type: field.TypeInt}, Default: true,
			Annotations: gen.Annotations{"EntGQL": map[string]any{"OrderField": "RANK"}, "API": api.Filter("Only items of this rank.")}},
		// An immutable, nullable one: shown, taken back unchanged on update.
		&gen.Field{Name: "origin", Type: str, Immutable: true, Optional: true, Nillable: true},
		// A nullable time: a Timestamp or null.
		&gen.Field{Name: "archived_at", Type: &field.TypeInfo{Type: field.TypeTime}, Optional: true, Nillable: true},
		// A hidden one: nowhere.
		&gen.Field{Name: "secret", Type: str, Annotations: gen.Annotations{"API": api.Hidden()}},
	)
	skeleton, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	nodes := slices.Clone(g.Nodes)
	nodes[slices.Index(nodes, base)] = &it
	out, err := build(skeleton, nodes)
	if err != nil {
		t.Fatal(err)
	}
	doc := decoded(t, out)
	schemas, params := section(doc, "schemas"), section(doc, "parameters")
	props := func(s string) map[string]any { return schemas[s].(map[string]any)["properties"].(map[string]any) }
	required := func(s string) []any { r, _ := schemas[s].(map[string]any)["required"].([]any); return r }

	for _, name := range []string{"color", "rank", "origin"} {
		if _, ok := props("Item")[name]; !ok {
			t.Errorf("Item lacks %s", name)
		}
		if _, ok := props("ItemUpdate")[name]; !ok {
			t.Errorf("ItemUpdate lacks %s", name)
		}
	}
	for _, s := range []string{"Item", "ItemCreate", "ItemUpdate"} {
		if _, ok := props(s)["secret"]; ok {
			t.Errorf("%s shows the hidden field", s)
		}
	}
	if !slices.Contains(required("Item"), "color") || !slices.Contains(required("Item"), "origin") {
		t.Errorf("Item requires %v: every key, origin (nullable) too", required("Item"))
	}
	if got := mustJSON(t, props("Item")["origin"]); got["type"] == nil || len(got["type"].([]any)) != 2 {
		t.Errorf("Item.origin = %v, want a nullable string", got)
	}
	if got, _ := json.Marshal(props("Item")["archived_at"]); string(got) != `{"anyOf":[{"$ref":"#/components/schemas/Timestamp"},{"type":"null"}]}` {
		t.Errorf("Item.archived_at = %s, want a Timestamp or null", got)
	}
	if _, ok := props("ItemCreate")["color"]; !ok || !slices.Contains(required("ItemCreate"), "color") {
		t.Error("ItemCreate does not require color")
	}
	if slices.Contains(required("ItemCreate"), "rank") {
		t.Error("ItemCreate requires rank, which has a default")
	}
	if _, ok := props("ItemCreate")["origin"]; ok {
		t.Error("ItemCreate takes the immutable origin")
	}
	sort := mustJSON(t, params["sort"])["schema"].(map[string]any)["enum"].([]any)
	if !slices.Contains(sort, "rank") || slices.Contains(sort, "color") || slices.Contains(sort, "status") {
		t.Errorf("sort enum = %v: rank in, color and status (api.NoSort) out", sort)
	}
	if _, ok := params["rank"]; !ok {
		t.Error("no rank parameter")
	}
	op := findOperation(mustObject(t, out), "listItems")
	listed, _ := json.Marshal(mustJSON(t, op)["parameters"])
	if !bytes.Contains(listed, []byte(`"#/components/parameters/rank"`)) {
		t.Errorf("listItems does not take rank: %s", listed)
	}
}

func mustObject(t *testing.T, data []byte) *object {
	t.Helper()
	v, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*object)
}

// mustJSON turns a generated value into plain JSON values.
func mustJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, data)
}
