package serial

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestMarshalSlice: each element sees its own index, in order; a panic
// nulls the list and reports one error, as MarshalSliceConcurrently does.
func TestMarshalSlice(t *testing.T) {
	for _, tc := range []struct {
		name       string
		length     int
		panicAt    int // -1: none
		omitPanics bool
		wantNil    bool
		wantErrs   int
	}{
		{"empty", 0, -1, false, false, 0},
		{"one", 1, -1, false, false, 0},
		{"twenty", 20, -1, false, false, 0},
		{"a panic nulls the list", 5, 2, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
			list := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "edges"}}}
			ctx = graphql.WithFieldContext(ctx, list)
			ctx = context.WithValue(ctx, outerKey{}, "outer")
			var seen []int
			ret := MarshalSlice(ctx, tc.length, 0, tc.omitPanics, func(ctx context.Context, i int) graphql.Marshaler {
				if got := *graphql.GetFieldContext(ctx).Index; got != i {
					t.Errorf("element %d sees index %d", i, got)
				}
				if got := graphql.GetFieldContext(ctx).Parent; got != list {
					t.Errorf("element %d: parent field context %p, want the list's %p", i, got, list)
				}
				if got := graphql.GetPath(ctx).String(); got != fmt.Sprintf("edges[%d]", i) {
					t.Errorf("element %d: path %s", i, got)
				}
				if got := ctx.Value(outerKey{}); got != "outer" {
					t.Errorf("element %d: a value of the list's context is %v", i, got)
				}
				seen = append(seen, i)
				if i == tc.panicAt {
					panic("boom")
				}
				return graphql.MarshalInt(i)
			})
			if (ret == nil) != tc.wantNil {
				t.Fatalf("nil list = %v, want %v", ret == nil, tc.wantNil)
			}
			if !tc.wantNil && len(ret) != tc.length {
				t.Fatalf("%d elements, want %d", len(ret), tc.length)
			}
			for i, v := range seen {
				if v != i {
					t.Fatalf("elements marshalled in order %v", seen)
				}
			}
			if errs := graphql.GetErrors(ctx); len(errs) != tc.wantErrs {
				t.Errorf("errors %v, want %d", errs, tc.wantErrs)
			}
		})
	}
}

// outerKey is a context key set above a list.
type outerKey struct{}

// TestObject: Object writes what gqlgen's FieldSet writes for the same
// resolved fields, a null for a value never resolved instead of a panic.
func TestObject(t *testing.T) {
	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	for _, tc := range []struct {
		name   string
		fields []graphql.CollectedField
		values []graphql.Marshaler
		want   string
	}{
		{"no fields", nil, nil, `{}`},
		{"one", []graphql.CollectedField{field("id")}, []graphql.Marshaler{graphql.MarshalString("itm_1")}, `{"id":"itm_1"}`},
		{"in selection order, aliases as written",
			[]graphql.CollectedField{field("z"), field("a_1"), field("__typename")},
			[]graphql.Marshaler{graphql.MarshalInt(1), graphql.MarshalString("x\"y\n"), graphql.MarshalString("Item")},
			`{"z":1,"a_1":"x\"y\n","__typename":"Item"}`},
		{"a nested object and a null", []graphql.CollectedField{field("node"), field("next")},
			[]graphql.Marshaler{Object([]graphql.CollectedField{field("id")}, []graphql.Marshaler{graphql.MarshalString("i")}), graphql.Null},
			`{"node":{"id":"i"},"next":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			Object(tc.fields, tc.values).MarshalGQL(&got)
			if got.String() != tc.want {
				t.Errorf("Object wrote %s, want %s", got.String(), tc.want)
			}
			f := NewFields(len(tc.values))
			copy(f.Values, tc.values)
			var viaFields bytes.Buffer
			f.Object(tc.fields).MarshalGQL(&viaFields)
			if viaFields.String() != tc.want {
				t.Errorf("Fields.Object wrote %s, want %s", viaFields.String(), tc.want)
			}
			fs := graphql.NewFieldSet(tc.fields)
			copy(fs.Values, tc.values)
			var gqlgen bytes.Buffer
			fs.MarshalGQL(&gqlgen)
			if got.String() != gqlgen.String() {
				t.Errorf("Object wrote %s, gqlgen's FieldSet %s", got.String(), gqlgen.String())
			}
		})
	}
	t.Run("an unresolved value is null", func(t *testing.T) {
		var got bytes.Buffer
		Object([]graphql.CollectedField{field("a")}, []graphql.Marshaler{nil}).MarshalGQL(&got)
		if got.String() != `{"a":null}` {
			t.Errorf("got %s", got.String())
		}
	})
}

// TestField: the marshaller runs under the field's own context, holding
// the value as its result; a panic becomes one error on the field and a
// null, as through graphql.ResolveField.
func TestField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		panics bool
		want   string
		errs   int
	}{
		{"value", false, `"v"`, 0},
		{"a panic is an error and null", true, `null`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
			oc := &graphql.OperationContext{RecoverFunc: graphql.DefaultRecover}
			ctx = graphql.WithOperationContext(ctx, oc)
			field := graphql.CollectedField{Field: &ast.Field{Alias: "node", Name: "node"}}
			fc := &graphql.FieldContext{Object: "Edge", Field: field}
			m := Field(ctx, oc, field, "Edge",
				func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { return fc, nil },
				"v",
				func(ctx context.Context, _ ast.SelectionSet, v string) graphql.Marshaler {
					if graphql.GetFieldContext(ctx) != fc || fc.Result != "v" {
						t.Errorf("marshal sees field context %v, result %v", graphql.GetFieldContext(ctx), fc.Result)
					}
					if tc.panics {
						panic("boom")
					}
					return graphql.MarshalString(v)
				}, true)
			var buf bytes.Buffer
			m.MarshalGQL(&buf)
			if buf.String() != tc.want {
				t.Errorf("wrote %s, want %s", buf.String(), tc.want)
			}
			if errs := graphql.GetErrors(ctx); len(errs) != tc.errs {
				t.Errorf("errors %v, want %d", errs, tc.errs)
			}
		})
	}
}

// TestFieldOfElement: an object field of each list element (an edge's
// node) has the field context the generated function makes, under the
// element's, with its own result and path; the function runs for the first
// element only, and again for a second object field of one element or a
// field with arguments.
func TestFieldOfElement(t *testing.T) {
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	oc := &graphql.OperationContext{RecoverFunc: graphql.DefaultRecover}
	ctx = graphql.WithOperationContext(ctx, oc)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "edges"}}})
	child := func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { return nil, nil }
	made := map[string]int{}
	fieldContext := func(args map[string]any) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
		return func(_ context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			made[field.Alias]++
			return &graphql.FieldContext{Object: "Edge", Field: field, Args: args, IsMethod: true, Child: child}, nil
		}
	}
	node := graphql.CollectedField{Field: &ast.Field{Alias: "node", Name: "node"}}
	other := graphql.CollectedField{Field: &ast.Field{Alias: "other", Name: "other"}}
	withArgs := graphql.CollectedField{Field: &ast.Field{Alias: "withArgs", Name: "withArgs"}}
	const n = 5
	MarshalSlice(ctx, n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		element := graphql.GetFieldContext(ctx)
		for _, f := range []struct {
			field graphql.CollectedField
			args  map[string]any
		}{{node, nil}, {other, nil}, {withArgs, map[string]any{"a": 1}}} {
			Field(ctx, oc, f.field, "Edge", fieldContext(f.args), i,
				func(ctx context.Context, _ ast.SelectionSet, v int) graphql.Marshaler {
					fc := graphql.GetFieldContext(ctx)
					if fc.Parent != element || fc.Object != "Edge" || fc.Field.Field != f.field.Field ||
						!fc.IsMethod || fc.Child == nil || fc.Result != v || len(fc.Args) != len(f.args) {
						t.Errorf("element %d, %s: field context %+v", i, f.field.Alias, fc)
					}
					if got, want := graphql.GetPath(ctx).String(), fmt.Sprintf("edges[%d].%s", i, f.field.Alias); got != want {
						t.Errorf("path %s, want %s", got, want)
					}
					return graphql.MarshalInt(v)
				}, true)
		}
		return graphql.MarshalInt(i)
	})
	if made["node"] != 1 || made["other"] != n || made["withArgs"] != n {
		t.Errorf("field contexts made %v, want node once, the others %d times", made, n)
	}
}

// TestNewFields: n values, held with the object in one allocation up to 16
// fields.
func TestNewFields(t *testing.T) {
	for n := range 20 {
		var f Fields
		allocs := testing.AllocsPerRun(10, func() { f = NewFields(n) })
		if len(f.Values) != n {
			t.Errorf("NewFields(%d): %d values", n, len(f.Values))
		}
		want := 1.0
		if n > 16 {
			want = 2
		}
		if allocs != want {
			t.Errorf("NewFields(%d): %v allocations, want %v", n, allocs, want)
		}
	}
}
