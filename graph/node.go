package graph

import (
	"context"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
)

// nodeType maps an id to the table of its type for node(id) and nodes(ids).
// Only items and users are nodes of the schema: any other id (a key's, a
// webhook's) is NOT_FOUND, as an unknown one is.
func nodeType(ctx context.Context, id string) (string, error) {
	table, err := ent.IDToType(ctx, id)
	if err != nil || (table != item.Table && table != user.Table) {
		return "", apperr.NotFound("node")
	}
	return table, nil
}
