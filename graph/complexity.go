package graph

import (
	"entgo.io/contrib/entgql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/graph/generated"
)

// complexity prices a connection at its page size times what each node
// asks for, so that a wide page of deep nodes costs what it costs the
// database; every other field costs 1 plus its children (gqlgen's default).
func complexity() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	c.Query.Items = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.ItemOrder, _ *ent.ItemWhereInput) int {
		return 1 + child*pageSize(first, last)
	}
	c.Query.Users = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.UserOrder, _ *ent.UserWhereInput) int {
		return 1 + child*pageSize(first, last)
	}
	c.User.Items = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.ItemOrder, _ *ent.ItemWhereInput) int {
		return 1 + child*pageSize(first, last)
	}
	c.Query.Nodes = func(child int, ids []string) int {
		return 1 + child*max(len(ids), 1)
	}
	return c
}
