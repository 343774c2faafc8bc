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

// TestItemRoundTrip: every field of ent.Item that the generated
// resource.Item carries (all but those hidden by api.Hidden) survives
// NewItem (REST, the outbox of webhooks and /v1/events) and then
// DecodeItem (the item of GraphQL subscriptions), which reads it back by
// ent's JSON names.
func TestItemRoundTrip(t *testing.T) {
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
		if _, ok := apiFields[name]; !ok {
			continue // hidden from clients
		}
		if _, ok := payload[name]; !ok {
			t.Errorf("ent.Item.%s: NewItem's JSON has no %q", f.Name, name)
			continue
		}
		w, g := v.FieldByIndex(f.Index).Interface(), gv.FieldByIndex(f.Index).Interface()
		if !equal(w, g) {
			t.Errorf("ent.Item.%s does not survive NewItem then DecodeItem: sent %v, got %v (resources.generated.go: see value in ent/entc_rest.go)", f.Name, w, g)
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
