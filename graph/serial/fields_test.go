package serial

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestCollectFields: the cache answers what graphql.CollectFields does for
// each selection set and type, from any number of resolvers at once.
func TestCollectFields(t *testing.T) {
	field := func(name string) *ast.Field { return &ast.Field{Alias: name, Name: name} }
	item, edge := []string{"Item"}, []string{"ItemEdge"}
	merged := field("id") // a fragment's, merged with other fields in two places
	sets := []struct {
		sel       ast.SelectionSet
		satisfies []string
	}{
		{ast.SelectionSet{merged, field("name")}, item},
		{ast.SelectionSet{merged, field("description")}, item},
		{ast.SelectionSet{field("id"), field("name")}, item},
		{ast.SelectionSet{field("node")}, edge},
		{ast.SelectionSet{field("id")}, item},
		{ast.SelectionSet{&ast.InlineFragment{TypeCondition: "ItemEdge", SelectionSet: ast.SelectionSet{field("cursor")}}, field("node")}, edge},
		{ast.SelectionSet{&ast.InlineFragment{TypeCondition: "ItemEdge", SelectionSet: ast.SelectionSet{field("cursor")}}, field("node")}, item},
	}
	for range 10 { // more sets than the cache holds: the rest are collected each time
		sets = append(sets, struct {
			sel       ast.SelectionSet
			satisfies []string
		}{ast.SelectionSet{field("id")}, item})
	}
	opCtx := &graphql.OperationContext{Doc: &ast.QueryDocument{}}
	if err := (FieldsCache{}).MutateOperationContext(context.Background(), opCtx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				for i, s := range sets {
					got := CollectFields(opCtx, s.sel, s.satisfies)
					want := graphql.CollectFields(&graphql.OperationContext{Doc: opCtx.Doc}, s.sel, s.satisfies)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("set %d: %v, want %v", i, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	c := opCtx.Stats.GetExtension(fieldsStatsKey).(*fieldsCache)
	if n := int(c.n.Load()); n != len(c.entries) {
		t.Errorf("%d cached entries, want one per set and type up to %d", n, len(c.entries))
	}
}

// TestSharedFields: an operation without directives shares its collected
// fields with every request of it, and has its lists rendered; one with a
// directive anywhere (a field, a fragment, a fragment's body) gets a cache
// of its own.
func TestSharedFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		query  string
		shared bool
	}{
		{"none", `{ items { edges { node { id ...F } } } } fragment F on Item { name }`, true},
		{"a field's @skip", `query($s: Boolean!) { items { edges { node { id @skip(if: $s) } } } }`, false},
		{"a nested @include", `{ items { edges { node { id name @include(if: true) } } } }`, false},
		{"a spread's directive", `{ items { ...F @include(if: true) } } fragment F on ItemConnection { totalCount }`, false},
		{"in a fragment's body", `{ items { ...F } } fragment F on ItemConnection { totalCount @skip(if: false) }`, false},
		{"an inline fragment's @defer", `{ items { ... @defer { totalCount } } }`, false},
		{"a fragment spread twice", `{ a: items { ...F } b: items { ...F } } fragment F on ItemConnection { totalCount }`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			caches := map[*fieldsCache]bool{}
			for range 3 {
				opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
				if err := (FieldsCache{}).MutateOperationContext(context.Background(), opCtx); err != nil {
					t.Fatal(err)
				}
				c := opCtx.Stats.GetExtension(fieldsStatsKey).(*fieldsCache)
				caches[c] = true
				if c.shared != tc.shared {
					t.Errorf("shared = %v, want %v", c.shared, tc.shared)
				}
				ctx := graphql.WithOperationContext(context.Background(), opCtx)
				if rendering(ctx) != tc.shared {
					t.Errorf("lists rendered = %v, want %v", rendering(ctx), tc.shared)
				}
			}
			if want := map[bool]int{true: 1, false: 3}[tc.shared]; len(caches) != want {
				t.Errorf("%d caches for 3 requests, want %d", len(caches), want)
			}
		})
	}
}
