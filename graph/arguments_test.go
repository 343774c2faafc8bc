package graph

import (
	"reflect"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestArgument: each argument as ArgumentMap has it, for literals,
// variables given or not, defaults and arguments not asked for.
func TestArgument(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		input Where { userID: String, status: String }
		type Query { items(first: Int, last: Int = 5, where: Where, after: String = "c"): Int }`})
	for _, tc := range []struct {
		query string
		vars  map[string]any
	}{
		{`{ items }`, nil},
		{`{ items(first: 20, where: {userID: "u", status: "s"}) }`, nil},
		{`query($f: Int, $l: Int) { items(first: $f, last: $l) }`, map[string]any{"f": 3}},
		{`query($u: String) { items(where: {userID: $u}, after: null) }`, map[string]any{"u": "user_1"}},
		{`query($w: Where) { items(where: $w) }`, map[string]any{"w": map[string]any{"status": "ACTIVE"}}},
	} {
		doc, errs := gqlparser.LoadQueryWithRules(schema, tc.query, nil)
		if errs != nil {
			t.Fatalf("%s: %v", tc.query, errs)
		}
		f := doc.Operations[0].SelectionSet[0].(*ast.Field)
		want := f.ArgumentMap(tc.vars)
		for _, name := range []string{"first", "last", "where", "after", "none"} {
			if got := Argument(f, name, tc.vars); !reflect.DeepEqual(got, want[name]) {
				t.Errorf("%s: %s is %#v, ArgumentMap has %#v", tc.query, name, got, want[name])
			}
		}
	}
}
