package resource_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/resource"
)

// hiddenItemFields are the fields of ent.Item no payload carries, each with
// its reason. A field listed here is absent from REST, webhooks, /v1/events
// and GraphQL subscriptions alike; skip it in GraphQL too (entgql.Skip).
var hiddenItemFields = map[string]string{
	// The spec fixes the item's JSON; the version reaches clients as the
	// ETag header (REST) and Item.etag (GraphQL), read from the row. An
	// event's item has no version, and asks for its etag are refused.
	"Version": "carried by ETag and Item.etag, not by the item's JSON",
}

// itemDataFields are ent.Item's fields that hold data: the exported ones
// but Edges (relations, loaded apart).
func itemDataFields(t *testing.T) []reflect.StructField {
	t.Helper()
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(reflect.TypeFor[ent.Item]()) {
		if !f.IsExported() || f.Anonymous || f.Name == "Edges" || len(f.Index) > 1 {
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatal("ent.Item has no data fields: the reflection is wrong")
	}
	return out
}

// jsonName is a field's name in JSON, from its tag.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// TestItemCoversEnt holds the one shape of an item (resource.Item, rendered
// by NewItem for REST, the outbox of webhooks and /v1/events, and read back
// by DecodeItem for GraphQL subscriptions) to ent.Item: every data field of
// ent.Item is in it under ent's JSON name and survives the round trip, or
// is listed in hiddenItemFields. A field added to ent/schema/item.go fails
// here until it is rendered.
func TestItemCoversEnt(t *testing.T) {
	apiFields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[resource.Item]()) {
		apiFields[jsonName(f)] = f
	}
	var want ent.Item
	v := reflect.ValueOf(&want).Elem()
	fields := itemDataFields(t)
	for i, f := range fields {
		setSample(t, v.FieldByIndex(f.Index), f.Name, i)
	}

	data, err := json.Marshal(resource.NewItem(&want))
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(data, &payload); err != nil {
		t.Fatal(err)
	}
	got, err := resource.DecodeItem(data)
	if err != nil {
		t.Fatal(err)
	}
	gv := reflect.ValueOf(got).Elem()
	for _, f := range fields {
		name := jsonName(f)
		if _, hidden := hiddenItemFields[f.Name]; hidden {
			if _, ok := payload[name]; ok {
				t.Errorf("ent.Item.%s is in hiddenItemFields but the payload carries %q", f.Name, name)
			}
			continue
		}
		if _, ok := apiFields[name]; !ok {
			t.Errorf("ent.Item.%s has no field in resource.Item: add %s with the tag json:%q to Item and set it in NewItem "+
				"(internal/resource/resource.go), then follow docs/development.md (\"Adding a field to Item\"); "+
				"or, if clients must not see it, list it in hiddenItemFields with the reason", f.Name, f.Name, name)
			continue
		}
		if _, ok := payload[name]; !ok {
			t.Errorf("ent.Item.%s: NewItem's JSON has no %q", f.Name, name)
			continue
		}
		w, g := v.FieldByIndex(f.Index).Interface(), gv.FieldByIndex(f.Index).Interface()
		if !equal(w, g) {
			t.Errorf("ent.Item.%s does not survive NewItem then DecodeItem: sent %v, got %v; set it in NewItem", f.Name, w, g)
		}
	}
	for name := range hiddenItemFields {
		if _, ok := reflect.TypeFor[ent.Item]().FieldByName(name); !ok {
			t.Errorf("hiddenItemFields lists %s, which ent.Item no longer has", name)
		}
	}
}

// equal compares two field values, times by instant.
func equal(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return reflect.DeepEqual(a, b)
}

// setSample gives v a value that is not its zero value and differs from
// field to field (i), so that a field copied into the wrong one shows.
func setSample(t *testing.T, v reflect.Value, name string, i int) {
	t.Helper()
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2024, 1, 2, 3, 4, 5, 6000*(i+1), time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strings.ToLower(name) + "-sample")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(i + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(i + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(i) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setSample(t, v.Elem(), name, i)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setSample(t, v.Index(0), name, i)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setSample(t, k, name, i)
		setSample(t, e, name, i)
		v.SetMapIndex(k, e)
	default:
		t.Fatalf("ent.Item.%s is a %s, which this test cannot fill: teach setSample its kind", name, v.Type())
	}
}
