package graph

import (
	"fmt"
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

// TestPageArgsDescribed: first and last of every connection (ent/entc.go
// writes their descriptions) state the bounds pageArgs checks, in the words
// of its error, and the page a connection gets without either.
func TestPageArgsDescribed(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	bounds := strings.TrimPrefix(pageReason, "must be ")
	n := 0
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if !isConnection(schema, f) {
				continue
			}
			n++
			for _, name := range []string{"first", "last"} {
				if d := f.Arguments.ForName(name).Description; !strings.Contains(d, bounds) {
					t.Errorf("%s.%s(%s:) is described %q, which does not say %q", def.Name, f.Name, name, d, bounds)
				}
			}
			if d, want := f.Arguments.ForName("first").Description, fmt.Sprintf("the first %d", defaultPageSize); !strings.Contains(d, want) {
				t.Errorf("%s.%s(first:) is described %q, which does not say %q", def.Name, f.Name, d, want)
			}
		}
	}
	if n < 3 {
		t.Fatalf("found %d connections, want items, users and User.items at least", n)
	}
}
