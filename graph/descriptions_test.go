package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph/generated"
)

// TestRootFieldsDescribed: every field of Query, Mutation and Subscription,
// and every argument of each, says what it is in the schema clients
// introspect, entgql's generated ones (items, users, node, nodes) included.
func TestRootFieldsDescribed(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	roots := []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription}
	n := 0
	for _, root := range roots {
		if root == nil {
			t.Fatal("the schema lacks a root type")
		}
		for _, f := range root.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue // GraphQL's own (__schema, __type)
			}
			n++
			if strings.TrimSpace(f.Description) == "" {
				t.Errorf("%s.%s has no description", root.Name, f.Name)
			}
			for _, a := range f.Arguments {
				if strings.TrimSpace(a.Description) == "" {
					t.Errorf("argument %s of %s.%s has no description", a.Name, root.Name, f.Name)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d root fields: is the schema loaded?", n)
	}
}
