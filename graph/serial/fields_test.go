package serial

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestCollectFields: the cache answers what graphql.CollectFields does for
// each selection set and type, from any number of resolvers at once; a
// fragment's array merged with other fields in two places is two sets.
func TestCollectFields(t *testing.T) {
	field := func(name string) *ast.Field { return &ast.Field{Alias: name, Name: name} }
	item, edge := []string{"Item"}, []string{"ItemEdge"}
	frag := ast.SelectionSet{field("id"), field("name"), field("description")}
	sets := []struct {
		sel       ast.SelectionSet
		satisfies []string
	}{
		{frag[:2], item}, // one array, two lengths: two sets
		{frag[:3], item},
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

// TestCollectFieldsWithoutCache: an operation context the extension did
// not see (a test's, gqlgen's own paths) collects as gqlgen does.
func TestCollectFieldsWithoutCache(t *testing.T) {
	opCtx := &graphql.OperationContext{Doc: &ast.QueryDocument{}}
	sel := ast.SelectionSet{&ast.Field{Alias: "id", Name: "id"}}
	got := CollectFields(opCtx, sel, []string{"Item"})
	if len(got) != 1 || got[0].Alias != "id" {
		t.Fatalf("collected %v, want the field id", got)
	}
}
