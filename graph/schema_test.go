package graph_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/internal/testutil"
)

// schemaSnapshot is the public schema as committed: what clients may rely on.
const schemaSnapshot = "testdata/schema.graphql"

// TestSchemaSnapshot: the committed snapshot is the SDL of the schema the
// server executes (go generate ./graph writes it: snapshot.go), so that a
// change of the public schema (an ent field, entgql's output, a
// hand-written type) shows in review as the API change it is; and what
// introspection through the router shows is that schema: the same types,
// and no directive but GraphQL's own (gqlgen's @goModel and @goField stay
// out).
func TestSchemaSnapshot(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchema(schema)
	got := b.String()

	want, err := os.ReadFile(schemaSnapshot)
	if err != nil {
		t.Fatalf("%v\nwrite it with: go generate ./graph", err)
	}
	if got != string(want) {
		t.Errorf("%s is not the schema the server executes: run go generate ./graph and review git diff %s\n\n%s",
			schemaSnapshot, schemaSnapshot, firstDifference(string(want), got))
	}
	for _, d := range []string{"@goModel", "@goField"} {
		if strings.Contains(got, d) {
			t.Errorf("the public schema has %s", d)
		}
	}

	env := testutil.New(t)
	r := testutil.GQL(t, env, env.Alice.Token, `{ __schema { types { name } directives { name } } }`, nil).OK(t)
	var introspected []string
	for _, ty := range r.At(t, "__schema", "types").([]any) {
		name := ty.(map[string]any)["name"].(string)
		if def := schema.Types[name]; !strings.HasPrefix(name, "__") && def != nil && !def.BuiltIn {
			introspected = append(introspected, name)
		}
	}
	var declared []string
	for name, def := range schema.Types {
		if !def.BuiltIn {
			declared = append(declared, name)
		}
	}
	slices.Sort(introspected)
	slices.Sort(declared)
	if !slices.Equal(introspected, declared) {
		t.Errorf("introspection shows types %v, the schema declares %v", introspected, declared)
	}
	for _, d := range r.At(t, "__schema", "directives").([]any) {
		name := d.(map[string]any)["name"].(string)
		if !slices.Contains([]string{"include", "skip", "deprecated", "specifiedBy", "oneOf", "defer"}, name) {
			t.Errorf("introspection shows the directive @%s, which is not GraphQL's own", name)
		}
	}
}

// firstDifference shows the first line at which two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("first difference at line %d:\n  snapshot: %s\n  served:   %s", i+1, wl, gl)
		}
	}
	return ""
}

// TestEmptyConnection: a page with nothing on it has an empty list of
// edges, never null, as the non-null schema promises.
func TestEmptyConnection(t *testing.T) {
	env := testutil.New(t)
	r := testutil.GQL(t, env, env.Alice.Token, `{ items { totalCount edges { node { id } } } me { items { edges { cursor } } } }`, nil).OK(t)
	for _, path := range [][]any{{"items", "edges"}, {"me", "items", "edges"}} {
		if edges, ok := r.At(t, path...).([]any); !ok || len(edges) != 0 {
			t.Errorf("%v = %v, want []", path, r.At(t, path...))
		}
	}
}

// TestEdgeCursors: each edge's cursor, made when selected, is the page
// info's start or end cursor at the page's ends, and paginating after the
// end cursor, or after an edge's cursor, continues the list, in both
// directions.
func TestEdgeCursors(t *testing.T) {
	env := testutil.New(t)
	for i := range 5 {
		env.CreateItem(env.Alice, fmt.Sprintf("item %d", i))
	}
	const page = `query($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
		items(first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node { id } } pageInfo { startCursor endCursor }
		}
	}`
	all := testutil.GQL(t, env, env.Alice.Token, page, map[string]any{"first": 5}).OK(t)
	ids := all.IDs(t, "items")
	if len(ids) != 5 {
		t.Fatalf("%d items, want 5", len(ids))
	}
	cursor := func(r testutil.GQLResponse, i int) any { return r.At(t, "items", "edges", i, "cursor") }
	for _, vars := range []map[string]any{{"first": 2}, {"last": 2}} {
		r := testutil.GQL(t, env, env.Alice.Token, page, vars).OK(t)
		if got, want := r.At(t, "items", "pageInfo", "startCursor"), cursor(r, 0); got != want {
			t.Errorf("%v: startCursor %v, first edge's %v", vars, got, want)
		}
		if got, want := r.At(t, "items", "pageInfo", "endCursor"), cursor(r, 1); got != want {
			t.Errorf("%v: endCursor %v, last edge's %v", vars, got, want)
		}
	}
	next := testutil.GQL(t, env, env.Alice.Token, page, map[string]any{"first": 2, "after": cursor(all, 1)}).OK(t)
	if got := next.IDs(t, "items"); fmt.Sprint(got) != fmt.Sprint(ids[2:4]) {
		t.Errorf("after the second edge's cursor: %v, want %v", got, ids[2:4])
	}
	prev := testutil.GQL(t, env, env.Alice.Token, page, map[string]any{"last": 2, "before": cursor(all, 3)}).OK(t)
	if got := prev.IDs(t, "items"); fmt.Sprint(got) != fmt.Sprint(ids[1:3]) {
		t.Errorf("before the fourth edge's cursor: %v, want %v", got, ids[1:3])
	}
}
