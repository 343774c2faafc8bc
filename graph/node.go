package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// nodeType maps an id to the table of its type for node(id) and nodes(ids).
// Only items and users are nodes of the schema: any other id (a key's, a
// webhook's) is NOT_FOUND, as an unknown one is.
//
// An id that is not one this API makes (a NUL character, which PostgreSQL
// refuses in text, or any other malformed id) is NOT_FOUND before it
// reaches a query, as a malformed id in a REST path is.
func nodeType(ctx context.Context, id string) (string, error) {
	if !pulid.Valid("item_", id) && !pulid.Valid("user_", id) {
		return "", apperr.NotFound("node")
	}
	table, err := ent.IDToType(ctx, id)
	if err != nil || (table != item.Table && table != user.Table) {
		return "", apperr.NotFound("node")
	}
	return table, nil
}

// Another user's item is PERMISSION_DENIED through node, nodes and item
// alike, as GET /v1/items/{id} answers 403: ent privacy hides the row, and
// service.Unreachable tells a hidden row from a missing one (NOT_FOUND).

// loadNode is ent's Noder with the codes of item(id).
func loadNode(ctx context.Context, svc *service.Service, c *ent.Client, id string) (ent.Noder, error) {
	n, err := c.Noder(ctx, id, ent.WithNodeType(nodeType))
	if err == nil || !notFound(err) {
		return n, err
	}
	why, err := svc.Unreachable(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return nil, why[id]
}

// loadNodes is ent's Noders (one query per type) with the codes of
// node(id). Noders reports each id it cannot return with graphql.AddError
// itself; those reports are collected here instead, and each is reported
// again with its code at its index.
func loadNodes(ctx context.Context, svc *service.Service, c *ent.Client, ids []string) ([]ent.Noder, error) {
	failed := make(map[int]error)
	collect := graphql.WithResponseContext(ctx, func(_ context.Context, err error) *gqlerror.Error {
		var g *gqlerror.Error
		if errors.As(err, &g) && len(g.Path) > 0 {
			if i, ok := g.Path[len(g.Path)-1].(ast.PathIndex); ok {
				failed[int(i)] = err
			}
		}
		return gqlerror.WrapIfUnwrapped(err)
	}, graphql.DefaultRecover)
	nodes, err := c.Noders(collect, ids, ent.WithNodeType(nodeType))
	if err != nil {
		if len(ids) != 1 {
			return nil, err
		}
		// Noders looks one id up with Noder, which returns its error.
		nodes, failed[0] = []ent.Noder{nil}, err
	}
	var missing []string
	for i, n := range nodes {
		if n == nil && (failed[i] == nil || notFound(failed[i])) {
			missing = append(missing, ids[i])
		}
	}
	why, err := svc.Unreachable(ctx, missing)
	if err != nil {
		return nil, err
	}
	for i, n := range nodes {
		if n != nil {
			continue
		}
		report, ok := why[ids[i]]
		if !ok {
			report = failure(ctx, failed[i])
		}
		graphql.AddError(graphql.WithPathContext(ctx, graphql.NewPathWithIndex(i)), report)
	}
	return nodes, nil
}

// failure maps what Noders reported for an id (a database error, wrapped
// for the response) to the contract's code, as the server's error presenter
// does for what a resolver returns (graph/server, errors.go).
func failure(ctx context.Context, err error) *apperr.Error {
	var g *gqlerror.Error
	if errors.As(err, &g) && g.Err != nil {
		err = g.Err
	}
	if err == nil {
		return apperr.NotFound("node")
	}
	return apperr.FromRequest(ctx, err)
}

// notFound reports whether err says a node was not there: ent's not-found,
// entgql's NOT_FOUND or the service's.
func notFound(err error) bool {
	if ent.IsNotFound(err) {
		return true
	}
	var e *apperr.Error
	if errors.As(err, &e) {
		return e.Code == apperr.CodeNotFound
	}
	var g *gqlerror.Error
	if errors.As(err, &g) {
		code, _ := g.Extensions["code"].(string)
		return code == string(apperr.CodeNotFound)
	}
	return false
}
