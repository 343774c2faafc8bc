package graph_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestConnectionAliases: a connection whose edges, node, pageInfo or
// totalCount a client renames, or whose pageInfo it selects without edges,
// answers what the same query without aliases answers, at the top, nested
// below a user (resolved and eagerly loaded) and through fragments.
func TestConnectionAliases(t *testing.T) {
	env := testutil.New(t)
	for i := range 5 {
		env.CreateItem(env.Alice, fmt.Sprint("item ", i))
	}
	env.CreateItem(env.Bob, "bob's")
	// The third item of Alice's first page of two, as $after.
	page := testutil.GQL(t, env, env.Alice.Token, `{ items(first: 2) { pageInfo { endCursor } edges { cursor } } }`, nil).OK(t)
	second := page.At(t, "items", "pageInfo", "endCursor")
	fourth := testutil.GQL(t, env, env.Alice.Token, `query($a: Cursor) { items(first: 2, after: $a) { edges { cursor } } }`,
		map[string]any{"a": second}).OK(t).At(t, "items", "edges", 1, "cursor")

	cases := []struct {
		name  string
		admin bool
		query string // with aliases
		ref   string // the same without them
		names map[string]string
		at    []string // where both answers are compared, after renaming
		vars  map[string]any
	}{
		{name: "edges renamed", query: `{ items(first: 2) { e: edges { node { id } } } }`,
			ref: `{ items(first: 2) { edges { node { id } } } }`, names: map[string]string{"e": "edges"}, at: []string{"items", "edges"}},
		{name: "node and cursor renamed", query: `{ items(first: 2) { edges { n: node { id } c: cursor } } }`,
			ref: `{ items(first: 2) { edges { node { id } cursor } } }`, names: map[string]string{"n": "node", "c": "cursor"}, at: []string{"items", "edges"}},
		{name: "edges twice under two names", query: `{ items(first: 2) { a: edges { node { id } } b: edges { node { name } } } }`,
			ref: `{ items(first: 2) { edges { node { id } } } }`, names: map[string]string{"a": "edges"}, at: []string{"items", "edges"}},
		{name: "pageInfo renamed", query: `{ items(first: 2) { p: pageInfo { endCursor hasNextPage } edges { cursor } } }`,
			ref: `{ items(first: 2) { pageInfo { endCursor hasNextPage } edges { cursor } } }`, names: map[string]string{"p": "pageInfo"}, at: []string{"items"}},
		{name: "pageInfo without edges", query: `{ items(first: 2) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`,
			ref: `{ items(first: 2) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor } } }`, at: []string{"items", "pageInfo"}},
		{name: "pageInfo with edges skipped", query: `{ items(first: 2) { edges @skip(if: true) { cursor } pageInfo { endCursor hasNextPage } } }`,
			ref: `{ items(first: 2) { pageInfo { endCursor hasNextPage } edges { cursor } } }`, at: []string{"items", "pageInfo"}},
		{name: "pageInfo without edges, the last page", query: `query($a: Cursor) { items(first: 2, after: $a) { pageInfo { endCursor hasNextPage } } }`,
			ref:  `query($a: Cursor) { items(first: 2, after: $a) { pageInfo { endCursor hasNextPage } edges { cursor } } }`,
			vars: map[string]any{"a": fourth}, at: []string{"items", "pageInfo"}},
		{name: "pageInfo without edges, a filter counted by entgql", query: `{ items(first: 2, where: {nameContains: "item"}) { totalCount pageInfo { endCursor hasNextPage } } }`,
			ref: `{ items(first: 2, where: {nameContains: "item"}) { totalCount pageInfo { endCursor hasNextPage } edges { cursor } } }`, at: []string{"items", "pageInfo"}},
		{name: "totalCount renamed, a filter counted by entgql", query: `{ items(where: {nameContains: "item"}) { t: totalCount } }`,
			ref: `{ items(where: {nameContains: "item"}) { totalCount } }`, names: map[string]string{"t": "totalCount"}, at: []string{"items"}},
		{name: "below me", query: `{ me { items(first: 2) { e: edges { node { id } } pageInfo { endCursor hasNextPage } } } }`,
			ref: `{ me { items(first: 2) { edges { node { id } } pageInfo { endCursor hasNextPage } } } }`, names: map[string]string{"e": "edges"}, at: []string{"me"}},
		{name: "below users, eagerly loaded", admin: true,
			query: `{ users(first: 3) { edges { node { email items(first: 2) { x: edges { node { id } } pageInfo { hasNextPage } } } } } }`,
			ref:   `{ users(first: 3) { edges { node { email items(first: 2) { edges { node { id } } pageInfo { hasNextPage } } } } } }`,
			names: map[string]string{"x": "edges"}, at: []string{"users"}},
		{name: "through a fragment", query: `query { items(first: 2) { ...C } } fragment C on ItemConnection { e: edges { node { id } } }`,
			ref: `{ items(first: 2) { edges { node { id } } } }`, names: map[string]string{"e": "edges"}, at: []string{"items", "edges"}},
		{name: "through an inline fragment on the edge", query: `{ items(first: 2) { edges { ... on ItemEdge { n: node { id } } } } }`,
			ref: `{ items(first: 2) { edges { node { id } } } }`, names: map[string]string{"n": "node"}, at: []string{"items", "edges"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			token := env.Alice.Token
			if c.admin {
				token = env.Admin.Token
			}
			got := walk(renameKeys(testutil.GQL(t, env, token, c.query, c.vars).OK(t).Data, c.names), c.at)
			want := walk(testutil.GQL(t, env, token, c.ref, c.vars).OK(t).Data, c.at)
			if !reflect.DeepEqual(got, want) || isEmpty(want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

// renameKeys returns v with the keys of its objects renamed per names, at
// every depth.
func renameKeys(v any, names map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if n, ok := names[k]; ok {
				k = n
			}
			out[k] = renameKeys(e, names)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = renameKeys(e, names)
		}
		return out
	}
	return v
}

// walk returns what v holds at the object keys path.
func walk(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// isEmpty reports whether v holds nothing to compare: no list with an
// element, no non-null scalar.
func isEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	case []any:
		return len(v) == 0
	}
	return v == nil
}
