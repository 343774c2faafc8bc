package graph_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestMergedSelections: each field answers exactly what its selections ask
// for, where a fragment is merged with different fields in different
// places of one operation (the same first selection, sets of the same
// length), on every request of the document.
func TestMergedSelections(t *testing.T) {
	env := testutil.New(t)
	env.CreateItem(env.Alice, "a")
	const edge = `fragment E on ItemEdge { node { id } }`
	for _, tc := range []struct {
		name  string
		query string
		want  map[string][]string // alias → the keys of its first node
	}{
		{"a fragment merged with different fields",
			`{ a: items { edges { ...E node { name } } } b: items { edges { ...E node { description } } } } ` + edge,
			map[string][]string{"a": {"id", "name"}, "b": {"description", "id"}}},
		{"the same, the other way round",
			`{ b: items { edges { ...E node { description } } } a: items { edges { ...E node { name } } } } ` + edge,
			map[string][]string{"a": {"id", "name"}, "b": {"description", "id"}}},
		{"a fragment alone and merged",
			`{ a: items { edges { ...E } } b: items { edges { ...E node { status } } } } ` + edge,
			map[string][]string{"a": {"id"}, "b": {"id", "status"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 {
				r := testutil.GQL(t, env, env.Alice.Token, tc.query, nil).OK(t)
				for alias, want := range tc.want {
					node, _ := r.At(t, alias, "edges", 0, "node").(map[string]any)
					var got []string
					for k := range node {
						got = append(got, k)
					}
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: node has %s, want %s\n%s", alias, strings.Join(got, ","), strings.Join(want, ","), r.Raw)
					}
				}
			}
		})
	}
}
