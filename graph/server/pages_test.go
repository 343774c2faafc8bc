package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/internal/service"
)

// connectionPaths finds, from the executable schema alone, every field
// whose type is a connection (an object with edges and pageInfo) and a
// query that reaches it: prefix opens the braces down to the type that
// holds it, suffix closes them.
func connectionPaths(schema *ast.Schema) map[string][2]string {
	type step struct{ typ, prefix, suffix string }
	found := map[string][2]string{}
	seen := map[string]bool{schema.Query.Name: true}
	queue := []step{{schema.Query.Name, "{ ", " }"}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		def := schema.Types[s.typ]
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			t := schema.Types[f.Type.Name()]
			if t == nil || t.Kind != ast.Object {
				continue
			}
			args, ok := requiredArgs(schema, f)
			if !ok {
				continue
			}
			key := def.Name + "." + f.Name
			if t.Fields.ForName("edges") != nil && t.Fields.ForName("pageInfo") != nil {
				if _, dup := found[key]; !dup {
					found[key] = [2]string{s.prefix, s.suffix}
				}
				if node := edgeNode(schema, t); node != "" && !seen[node] {
					seen[node] = true
					queue = append(queue, step{node, s.prefix + f.Name + args + " { edges { node { ", " } } }" + s.suffix})
				}
				continue
			}
			if !seen[t.Name] {
				seen[t.Name] = true
				queue = append(queue, step{t.Name, s.prefix + f.Name + args + " { ", " }" + s.suffix})
			}
		}
	}
	return found
}

// requiredArgs writes a value for each required argument of f, or reports
// false for one it cannot make up.
func requiredArgs(schema *ast.Schema, f *ast.FieldDefinition) (string, bool) {
	var parts []string
	for _, a := range f.Arguments {
		if !a.Type.NonNull || a.DefaultValue != nil {
			continue
		}
		switch t := schema.Types[a.Type.Name()]; {
		case a.Type.Elem != nil:
			return "", false
		case t.Kind == ast.Enum:
			parts = append(parts, a.Name+": "+t.EnumValues[0].Name)
		case t.Name == "Int":
			parts = append(parts, a.Name+": 1")
		case t.Name == "Boolean":
			parts = append(parts, a.Name+": true")
		case t.Kind == ast.Scalar:
			parts = append(parts, a.Name+`: "x"`)
		default:
			return "", false
		}
	}
	if len(parts) == 0 {
		return "", true
	}
	return "(" + strings.Join(parts, ", ") + ")", true
}

// edgeNode is the type of a connection's edges' node.
func edgeNode(schema *ast.Schema, conn *ast.Definition) string {
	edge := schema.Types[conn.Fields.ForName("edges").Type.Name()]
	if edge == nil || edge.Fields.ForName("node") == nil {
		return ""
	}
	return edge.Fields.ForName("node").Type.Name()
}

// TestEveryConnectionBounded walks the executable schema and holds every
// connection field, wherever it is, to the page rules: it takes first, and
// last if it pages backwards (isConnection finds it), is priced per node,
// refuses a page over 100 naming the argument, and without first or last
// gets the default page of 20, priced as such. A connection added to the
// schema is held to them with no list to update.
func TestEveryConnectionBounded(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: graph.NewResolver(nil)}).Schema()
	paths := connectionPaths(schema)
	var names []string
	for name := range paths {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, want := range []string{"Query.items", "Query.users", "User.items", "Query.webhooks", "Webhook.deliveries", "Query.events"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("%s not found among the connections %v", want, names)
		}
	}
	const limit = 1_000_000
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			field := name[strings.IndexByte(name, '.')+1:]
			p := paths[name]
			query := func(args string) (*ast.QueryDocument, *ast.OperationDefinition) {
				q := p[0] + field + args + " { edges { node { __typename } } }" + p[1]
				doc, errs := gqlparser.LoadQueryWithRules(schema, q, nil)
				if errs != nil {
					t.Fatalf("%s: %v", q, errs)
				}
				return doc, doc.Operations[0]
			}
			at := func(args string) cost {
				_, op := query(args)
				return price(schema, op, nil, limit)
			}
			one, two := at("(first: 1)"), at("(first: 2)")
			if one.Over != "" || two.Complexity-one.Complexity < 2 {
				t.Errorf("not priced per node: first 1 costs %d, first 2 costs %d (%s)", one.Complexity, two.Complexity, one.Over)
			}
			def := schema.Types[name[:strings.IndexByte(name, '.')]].Fields.ForName(field)
			for _, arg := range []string{"first", "last"} {
				if arg == "last" && def.Arguments.ForName(arg) == nil {
					continue // a connection that pages forwards only
				}
				c := at(fmt.Sprintf("(%s: %d)", arg, service.MaxPageSize+1))
				if c.Invalid == nil || c.Invalid.Details["field"] != arg {
					t.Errorf("%s: %d is not refused naming %s: %+v", arg, service.MaxPageSize+1, arg, c)
				}
			}
			doc, op := query("")
			dop := withDefaultPages(schema, doc, op, nil).op
			if dop == nil {
				t.Fatalf("no default page given")
			}
			if got, want := price(schema, dop, nil, limit), at(fmt.Sprintf("(first: %d)", service.DefaultPageSize)); got.Complexity != want.Complexity {
				t.Errorf("the default page costs %d, first: %d costs %d", got.Complexity, service.DefaultPageSize, want.Complexity)
			}
			if !isConnection(schema, connectionDef(dop.SelectionSet, field)) {
				t.Errorf("isConnection does not know it")
			}
			if first := firstOf(dop.SelectionSet, field); first != fmt.Sprint(service.DefaultPageSize) {
				t.Errorf("default first %q, want %d", first, service.DefaultPageSize)
			}
		})
	}
}

// connectionDef finds the definition of the field named name in set.
func connectionDef(set ast.SelectionSet, name string) *ast.FieldDefinition {
	if f := findField(set, name); f != nil {
		return f.Definition
	}
	return nil
}

// firstOf is the raw first argument of the deepest field named name.
func firstOf(set ast.SelectionSet, name string) string {
	f := findField(set, name)
	if f == nil {
		return ""
	}
	if a := f.Arguments.ForName("first"); a != nil {
		return a.Value.Raw
	}
	return ""
}

// findField is the deepest field named name in set.
func findField(set ast.SelectionSet, name string) *ast.Field {
	var found *ast.Field
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == name {
				found = s
			}
			if deeper := findField(s.SelectionSet, name); deeper != nil {
				found = deeper
			}
		case *ast.InlineFragment:
			if deeper := findField(s.SelectionSet, name); deeper != nil {
				found = deeper
			}
		}
	}
	return found
}

// TestDefaultPages: the default page is given in a copy (the parsed
// document is shared by every request of it), once per operation when the
// variables cannot change it, per request when they can.
func TestDefaultPages(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: graph.NewResolver(nil)}).Schema()
	d := pageDefaults{schema: schema, memo: new(opMemo[defaulted])}
	run := func(doc *ast.QueryDocument, vars map[string]any) *ast.OperationDefinition {
		opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: vars}
		if err := d.MutateOperationContext(context.Background(), opCtx); err != nil {
			t.Fatal(err)
		}
		return opCtx.Operation
	}
	load := func(q string) *ast.QueryDocument {
		doc, errs := gqlparser.LoadQueryWithRules(schema, q, nil)
		if errs != nil {
			t.Fatal(errs)
		}
		return doc
	}

	static := load(`{ me { ...F a: items(last: 3) { totalCount } } } fragment F on User { items { totalCount } }`)
	first, second := run(static, nil), run(static, nil)
	if first == static.Operations[0] || first != second {
		t.Errorf("a static operation is not rewritten once: %p %p %p", static.Operations[0], first, second)
	}
	if f := findFieldAlias(first.SelectionSet, "items"); f == nil || f.Arguments.ForName("first") == nil || f.Arguments.ForName("first").Value.Raw != "20" {
		t.Errorf("items in the fragment has no first: 20")
	}
	if findField(static.Fragments.ForName("F").SelectionSet, "items").Arguments.ForName("first") != nil {
		t.Errorf("the shared fragment was edited")
	}
	if a := findFieldAlias(first.SelectionSet, "a"); a == nil || a.Arguments.ForName("first") != nil {
		t.Errorf("a connection with last got a first too")
	}

	dynamic := load(`query($n: Int) { me { items(first: $n) { totalCount } } }`)
	if got := firstOf(run(dynamic, map[string]any{"n": nil}).SelectionSet, "items"); got != "20" {
		t.Errorf("null variable: first %q, want 20", got)
	}
	if op := run(dynamic, map[string]any{"n": 5}); op != dynamic.Operations[0] {
		t.Errorf("first: $n of 5 was rewritten")
	}
}

// findFieldAlias is the field of alias name in set, at any depth.
func findFieldAlias(set ast.SelectionSet, alias string) *ast.Field {
	for _, sel := range set {
		var child ast.SelectionSet
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias == alias {
				return s
			}
			child = s.SelectionSet
		case *ast.InlineFragment:
			child = s.SelectionSet
		}
		if f := findFieldAlias(child, alias); f != nil {
			return f
		}
	}
	return nil
}

// TestPageArgsDescribed: first and last of every connection (ent/entc.go
// writes their descriptions) state the bounds pageArgs checks, in the words
// of its error, and the page a connection gets without either.
func TestPageArgsDescribed(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	bounds := strings.TrimPrefix(graph.PageSizeError("first").Details["reason"].(string), "must be ")
	n := 0
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if !isConnection(schema, f) {
				continue
			}
			n++
			for _, name := range []string{"first", "last"} {
				a := f.Arguments.ForName(name)
				if a == nil {
					continue // last, of a connection that pages forwards only
				}
				if d := a.Description; !strings.Contains(d, bounds) {
					t.Errorf("%s.%s(%s:) is described %q, which does not say %q", def.Name, f.Name, name, d, bounds)
				}
			}
			if d, want := f.Arguments.ForName("first").Description, fmt.Sprintf("the first %d", service.DefaultPageSize); !strings.Contains(d, want) {
				t.Errorf("%s.%s(first:) is described %q, which does not say %q", def.Name, f.Name, d, want)
			}
		}
	}
	if n < 3 {
		t.Fatalf("found %d connections, want items, users and User.items at least", n)
	}
}
