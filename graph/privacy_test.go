package graph_test

import (
	"slices"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestPrivacy checks every path to an item: a non-admin sees only their own
// items, an admin sees all. One row per path and viewer.
func TestPrivacy(t *testing.T) {
	env := testutil.New(t)
	alice1 := env.CreateItem(env.Alice, "alice 1")
	alice2 := env.CreateItem(env.Alice, "alice 2")
	bob1 := env.CreateItem(env.Bob, "bob 1")
	admin1 := env.CreateItem(env.Admin, "admin 1")
	all := []string{alice1, alice2, bob1, admin1}
	vars := map[string]any{"alice": env.Alice.UserID, "bob": env.Bob.UserID, "bobItem": bob1, "aliceItem": alice1}

	type want struct {
		ids   []string // node ids found at path (as a set)
		code  string   // extensions.code of the first error
		total int      // totalCount, when >= 0
	}
	cases := []struct {
		name  string
		as    testutil.Actor
		query string
		path  []any // where the connection or list is
		want  want
	}{
		{"items: user sees own", env.Alice,
			`{ items { totalCount edges { node { id } } } }`, []any{"items"},
			want{ids: []string{alice1, alice2}, total: 2}},
		{"items: admin sees all", env.Admin,
			`{ items { totalCount edges { node { id } } } }`, []any{"items"},
			want{ids: all, total: 4}},
		{"items: filter on another user finds nothing", env.Alice,
			`query($bob: ID) { items(where: {userID: $bob}) { totalCount edges { node { id } } } }`, []any{"items"},
			want{ids: []string{}, total: 0}},
		{"items: or-filter cannot widen", env.Alice,
			`query($bob: ID) { items(where: {or: [{userID: $bob}, {nameContains: "bob"}]}) { totalCount edges { node { id } } } }`, []any{"items"},
			want{ids: []string{}, total: 0}},
		{"items: admin filters on a user", env.Admin,
			`query($bob: ID) { items(where: {userID: $bob}) { totalCount edges { node { id } } } }`, []any{"items"},
			want{ids: []string{bob1}, total: 1}},
		{"item: another's is denied", env.Alice,
			`query($bobItem: ID!) { item(id: $bobItem) { id } }`, nil,
			want{code: "PERMISSION_DENIED", total: -1}},
		{"item: admin reads another's", env.Admin,
			`query($bobItem: ID!) { item(id: $bobItem) { id } }`, []any{"item"},
			want{ids: []string{bob1}, total: -1}},
		{"node: another's item is denied", env.Alice,
			`query($bobItem: ID!) { node(id: $bobItem) { id } }`, nil,
			want{code: "PERMISSION_DENIED", total: -1}},
		{"node: another user is denied", env.Alice,
			`query($bob: ID!) { node(id: $bob) { id } }`, nil,
			want{code: "PERMISSION_DENIED", total: -1}},
		{"node: an unknown item is not found", env.Alice,
			`{ node(id: "item_01m80rv1h8d119v06vwk93e0ze") { id } }`, nil,
			want{code: "NOT_FOUND", total: -1}},
		{"node: own item", env.Alice,
			`query($aliceItem: ID!) { node(id: $aliceItem) { id } }`, []any{"node"},
			want{ids: []string{alice1}, total: -1}},
		{"node: admin reads another's", env.Admin,
			`query($bobItem: ID!) { node(id: $bobItem) { id } }`, []any{"node"},
			want{ids: []string{bob1}, total: -1}},
		{"nodes: another's is null with PERMISSION_DENIED", env.Alice,
			`query($aliceItem: ID!, $bobItem: ID!) { nodes(ids: [$aliceItem, $bobItem]) { id } }`, []any{"nodes"},
			want{ids: []string{alice1}, code: "PERMISSION_DENIED", total: -1}},
		{"nodes: one id, another's", env.Alice,
			`query($bobItem: ID!) { nodes(ids: [$bobItem]) { id } }`, []any{"nodes"},
			want{ids: []string{}, code: "PERMISSION_DENIED", total: -1}},
		{"nodes: an unknown item is null with NOT_FOUND", env.Alice,
			`query($aliceItem: ID!) { nodes(ids: [$aliceItem, "item_01m80rv1h8d119v06vwk93e0ze"]) { id } }`, []any{"nodes"},
			want{ids: []string{alice1}, code: "NOT_FOUND", total: -1}},
		{"nodes: admin reads both", env.Admin,
			`query($aliceItem: ID!, $bobItem: ID!) { nodes(ids: [$aliceItem, $bobItem]) { id } }`, []any{"nodes"},
			want{ids: []string{alice1, bob1}, total: -1}},
		{"edge: me.items is own", env.Alice,
			`{ me { items { totalCount edges { node { id } } } } }`, []any{"me", "items"},
			want{ids: []string{alice1, alice2}, total: 2}},
		{"edge: an item's owner's items stay own", env.Alice,
			`{ items(first: 2) { edges { node { owner { items(first: 5) { totalCount edges { node { id } } } } } } } }`, []any{"items", "edges", 0, "node", "owner", "items"},
			want{ids: []string{alice1, alice2}, total: 2}},
		{"edge: admin reads a user's items", env.Admin,
			`query($bob: ID!) { node(id: $bob) { ... on User { items { totalCount edges { node { id } } } } } }`, []any{"node", "items"},
			want{ids: []string{bob1}, total: 1}},
		{"users: non-admin is denied", env.Alice,
			`{ users { totalCount edges { node { id } } } }`, nil,
			want{code: "PERMISSION_DENIED", total: -1}},
		{"users: admin lists all", env.Admin,
			`{ users { totalCount edges { node { id } } } }`, []any{"users"},
			want{ids: []string{env.Admin.UserID, env.Alice.UserID, env.Bob.UserID}, total: 3}},
		{"users: admin reaches every item through users", env.Admin,
			`{ users(where: {hasItems: true}) { totalCount } items { totalCount } }`, []any{"items"},
			want{total: 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, env, c.as.Token, c.query, vars)
			if r.Status != 200 || r.Code() != c.want.code {
				t.Fatalf("status %d, code %q, want %q\n%s", r.Status, r.Code(), c.want.code, r.Raw)
			}
			if c.path == nil {
				if r.Data != nil && len(r.Errors) == 0 {
					t.Fatalf("want no data: %s", r.Raw)
				}
				return
			}
			v := r.At(t, c.path...)
			var got []string
			switch v := v.(type) {
			case map[string]any:
				if _, conn := v["totalCount"]; conn {
					if c.want.ids != nil {
						got = r.IDs(t, c.path...)
					}
					if n := int(v["totalCount"].(float64)); n != c.want.total {
						t.Errorf("totalCount = %d, want %d", n, c.want.total)
					}
				} else {
					got = []string{v["id"].(string)}
				}
			case []any:
				for _, n := range v {
					if n != nil {
						got = append(got, n.(map[string]any)["id"].(string))
					}
				}
			}
			if c.want.ids == nil {
				return
			}
			slices.Sort(got)
			w := slices.Clone(c.want.ids)
			slices.Sort(w)
			if !slices.Equal(got, w) {
				t.Errorf("ids = %v, want %v\n%s", got, w, r.Raw)
			}
		})
	}
}
