package serial

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// listModes are the contexts a list is marshalled in: an operation's.
var listModes = []struct {
	name string
	with func(ctx context.Context) context.Context
}{
	{"operation", func(ctx context.Context) context.Context {
		oc := &graphql.OperationContext{RecoverFunc: graphql.DefaultRecover}
		return graphql.WithOperationContext(ctx, oc)
	}},
}

// TestMarshalSlice: each element sees its own index, in order, under the
// list's field context; a panic nulls the list and reports one error, as
// MarshalSliceConcurrently does; a null element is written as null, or
// nulls a list of non-null elements, every element resolved all the same.
// Elements are made of objects, nested lists and fields of their own.
func TestMarshalSlice(t *testing.T) {
	id := graphql.CollectedField{Field: &ast.Field{Alias: "id", Name: "id"}}
	tags := graphql.CollectedField{Field: &ast.Field{Alias: "tags", Name: "tags"}}
	node := graphql.CollectedField{Field: &ast.Field{Alias: "node", Name: "node"}}
	nodeContext := func(_ context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
		return &graphql.FieldContext{Object: "Edge", Field: field}, nil
	}
	// object is an element {"id":i,"tags":[…i tags…]} made as the
	// generated code makes one, its tags a nested list.
	object := func(ctx context.Context, i int) graphql.Marshaler {
		f := NewFields(ctx, 2)
		f.Values[0] = graphql.MarshalInt(i)
		f.Values[1] = MarshalSlice(ctx, i, 0, false, func(ctx context.Context, j int) graphql.Marshaler {
			return graphql.MarshalString(fmt.Sprintf("t%d.%d", i, j))
		})
		return f.Object([]graphql.CollectedField{id, tags})
	}
	for _, tc := range []struct {
		name       string
		length     int
		nonNull    bool
		omitPanics bool
		element    func(ctx context.Context, i int) graphql.Marshaler
		want       string // "nil": no list; "null": a null element for the generated code to null the list
		wantErrs   int
	}{
		{"empty", 0, true, false, nil, `[]`, 0},
		{"one", 1, true, false, nil, `[0]`, 0},
		{"twenty", 20, true, false, nil, `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]`, 0},
		{"a panic nulls the list", 5, true, false, func(ctx context.Context, i int) graphql.Marshaler {
			if i == 2 {
				panic("boom")
			}
			return graphql.MarshalInt(i)
		}, "nil", 1},
		{"two panics, two errors", 5, true, false, func(ctx context.Context, i int) graphql.Marshaler {
			if i%2 == 1 {
				panic("boom")
			}
			return graphql.MarshalInt(i)
		}, "nil", 2},
		{"a null element of a nullable list", 3, false, false, func(ctx context.Context, i int) graphql.Marshaler {
			if i == 1 {
				return graphql.Null
			}
			return graphql.MarshalInt(i)
		}, `[0,null,2]`, 0},
		{"null elements of a non-null list, each reporting its error", 4, true, false, func(ctx context.Context, i int) graphql.Marshaler {
			if i >= 1 {
				graphql.AddErrorf(ctx, "element %d is null", i)
				return graphql.Null
			}
			return graphql.MarshalInt(i)
		}, "null", 3},
		{"objects with nested lists", 3, true, false, object,
			`[{"id":0,"tags":[]},{"id":1,"tags":["t1.0"]},{"id":2,"tags":["t2.0","t2.1"]}]`, 0},
		{"an object field of each element", 3, true, false, func(ctx context.Context, i int) graphql.Marshaler {
			f := NewFields(ctx, 1)
			f.Values[0] = Field(ctx, graphql.GetOperationContext(ctx), node, nodeContext, i,
				func(ctx context.Context, _ ast.SelectionSet, v int) graphql.Marshaler { return object(ctx, v) }, true)
			return f.Object([]graphql.CollectedField{node})
		}, `[{"node":{"id":0,"tags":[]}},{"node":{"id":1,"tags":["t1.0"]}},{"node":{"id":2,"tags":["t2.0","t2.1"]}}]`, 0},
		{"objects, one of a different shape", 3, true, false, func(ctx context.Context, i int) graphql.Marshaler {
			if i == 1 {
				f := NewFields(ctx, 1)
				f.Values[0] = graphql.MarshalInt(i)
				return f.Object([]graphql.CollectedField{id})
			}
			return object(ctx, i)
		}, `[{"id":0,"tags":[]},{"id":1},{"id":2,"tags":["t2.0","t2.1"]}]`, 0},
	} {
		for _, mode := range listModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
				ctx = mode.with(ctx)
				list := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "edges"}}}
				ctx = graphql.WithFieldContext(ctx, list)
				ctx = context.WithValue(ctx, outerKey{}, "outer")
				element := tc.element
				if element == nil {
					element = func(_ context.Context, i int) graphql.Marshaler { return graphql.MarshalInt(i) }
				}
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
					return element(ctx, i)
				})
				if len(seen) != tc.length {
					t.Errorf("elements resolved %v, want all %d", seen, tc.length)
				}
				for i, v := range seen {
					if v != i {
						t.Fatalf("elements marshalled in order %v", seen)
					}
				}
				got := "nil"
				if ret != nil {
					var buf bytes.Buffer
					ret.MarshalGQL(&buf)
					got = buf.String()
					for _, e := range ret {
						if e == graphql.Null && tc.nonNull {
							got = "null"
						}
					}
				}
				if got != tc.want {
					t.Errorf("wrote %s, want %s", got, tc.want)
				}
				if errs := graphql.GetErrors(ctx); len(errs) != tc.wantErrs {
					t.Errorf("errors %v, want %d", errs, tc.wantErrs)
				}
			})
		}
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
			f := NewFields(context.Background(), len(tc.values))
			copy(f.Values, tc.values)
			var viaFields bytes.Buffer
			f.Object(tc.fields).MarshalGQL(&viaFields)
			if viaFields.String() != tc.want {
				t.Errorf("Fields.Object wrote %s, want %s", viaFields.String(), tc.want)
			}
			var other strings.Builder // a writer that is not a bytes.Buffer
			Object(tc.fields, tc.values).MarshalGQL(&other)
			if other.String() != tc.want {
				t.Errorf("Object wrote %s to a strings.Builder, want %s", other.String(), tc.want)
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
			m := Field(ctx, oc, field,
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
// element's, with its own result and path.
func TestFieldOfElement(t *testing.T) {
	for _, mode := range listModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
			ctx = mode.with(ctx)
			oc := graphql.GetOperationContext(ctx)
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
					Field(ctx, oc, f.field, fieldContext(f.args), i,
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
			if made["node"] != n || made["other"] != n || made["withArgs"] != n {
				t.Errorf("field contexts made %v, want each %d times", made, n)
			}
		})
	}
}

// TestNewFields: n values, in the object's own slice.
func TestNewFields(t *testing.T) {
	for n := range 20 {
		var f Fields
		allocs := testing.AllocsPerRun(10, func() { f = NewFields(context.Background(), n) })
		if len(f.Values) != n {
			t.Errorf("NewFields(%d): %d values", n, len(f.Values))
		}
		want := 2.0
		if n == 0 {
			want = 1
		}
		if allocs != want {
			t.Errorf("NewFields(%d): %v allocations, want %v", n, allocs, want)
		}
	}
}
