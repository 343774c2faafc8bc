package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/graph/enum"
	"github.com/acme/itemsvc/internal/service"
)

// Item connections (Query.items, User.items) answer totalCount from the item
// counters when their `where` asks only what the counters know: the owner and
// the status, by equality. entgql's pagination and field collection would
// COUNT the items whenever totalCount or pageInfo is selected, so the
// resolvers hand them a field selection without those two fields in every
// such connection (withoutCountedTotals) and fill them in afterwards
// (fillCounted). Any other filter is counted by entgql as before.

// Field names of a connection, as entgql's pagination knows them.
const (
	totalCountField = "totalCount"
	pageInfoField   = "pageInfo"
	edgesField      = "edges"
)

// itemConnectionType is the GraphQL type of the item connections.
const itemConnectionType = "ItemConnection"

// counted is the part of an ItemWhereInput the counters answer: an owner
// and a status, each "" for any.
type counted struct {
	userID, status string
}

// countedWhere reads a connection's raw `where` argument (after variables):
// ok when it is absent or uses nothing but userID and status equality.
func countedWhere(where any) (counted, bool) {
	var c counted
	if where == nil {
		return c, true
	}
	m, ok := where.(map[string]any)
	if !ok {
		return c, false
	}
	for k, v := range m {
		if v == nil {
			continue // an explicit null filters nothing
		}
		s, ok := v.(string)
		if !ok || s == "" { // "" is a filter (no such owner), not "any"
			return c, false
		}
		switch k {
		case "userID":
			c.userID = s
		case "status":
			st, err := enum.UnmarshalItemStatus(s) // ACTIVE, as the counters' active
			if err != nil {
				return c, false
			}
			c.status = st.String()
		default:
			return c, false
		}
	}
	return c, true
}

// countedConnection reports whether a selected field is an item connection
// whose total the counters answer, and with which filter.
func countedConnection(oc *graphql.OperationContext, f *ast.Field) (counted, bool) {
	if f == nil || f.Definition == nil || f.Definition.Type.Name() != itemConnectionType {
		return counted{}, false
	}
	return countedWhere(Argument(f, "where", oc.Variables))
}

// entgqlSelection returns ctx with the field selection entgql's pagination
// and field collection are to read: connections canonical
// (withCanonicalConnections) and counted totals stripped
// (withoutCountedTotals).
func entgqlSelection(ctx context.Context) context.Context {
	return withoutCountedTotals(withCanonicalConnections(ctx))
}

// withoutCountedTotals returns ctx with a field selection in which no item
// connection the counters answer (the field itself, or any nested one that
// entgql's field collection would load) selects totalCount or pageInfo. The
// original selection is shared by every request of the same document, so
// the changed path is copied, never edited.
func withoutCountedTotals(ctx context.Context) context.Context {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return ctx
	}
	oc := graphql.GetOperationContext(ctx)
	_, self := countedConnection(oc, fc.Field.Field)
	sel, changed := stripTotals(oc, fc.Field.Selections, self)
	if !changed {
		return ctx
	}
	return withSelection(ctx, fc, sel)
}

// stripTotals drops totalCount and pageInfo from set when it is the selection
// of a counted connection, and from the counted connections below it;
// fragment spreads on the way are inlined so that the shared fragment stays
// as it is.
func stripTotals(oc *graphql.OperationContext, set ast.SelectionSet, inCounted bool) (ast.SelectionSet, bool) {
	out := make(ast.SelectionSet, 0, len(set))
	changed := false
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if inCounted && (s.Name == totalCountField || s.Name == pageInfoField) {
				changed = true
				continue
			}
			_, below := countedConnection(oc, s)
			if child, ok := stripTotals(oc, s.SelectionSet, below); ok {
				cp := *s
				cp.SelectionSet = child
				sel, changed = &cp, true
			}
		case *ast.InlineFragment:
			if child, ok := stripTotals(oc, s.SelectionSet, inCounted); ok {
				cp := *s
				cp.SelectionSet = child
				sel, changed = &cp, true
			}
		case *ast.FragmentSpread:
			def := oc.Doc.Fragments.ForName(s.Name)
			if def == nil {
				break
			}
			if child, ok := stripTotals(oc, def.SelectionSet, inCounted); ok {
				sel, changed = inlined(s, def, child), true
			}
		}
		out = append(out, sel)
	}
	if !changed {
		return set, false
	}
	return out, true
}

// fillCounted sets the totalCount of a connection that withoutCountedTotals
// kept from counting, when the query asks for it, and its pageInfo when no
// nodes were loaded to build it from (only edges, or a page of zero), as
// entgql does from its count. total is called only if needed.
func fillCounted(ctx context.Context, conn *ent.ItemConnection, first, last *int, total func() (int, error)) error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	var wantTotal, wantPageInfo, edges bool
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		switch {
		case f.Name == totalCountField:
			wantTotal = true
		case f.Name == pageInfoField:
			wantPageInfo = true
		case f.Name == edgesField:
			edges = true
		}
	}
	// entgql loaded the nodes when edges or pageInfo was selected
	// (withCanonicalConnections) and the page is not one of zero.
	noNodes := (!edges && !wantPageInfo) || (first != nil && *first == 0) || (last != nil && *last == 0)
	if !wantTotal && !(wantPageInfo && noNodes) {
		return nil
	}
	n, err := total()
	if err != nil {
		return err
	}
	conn.TotalCount = n
	if noNodes {
		conn.PageInfo.HasNextPage = first != nil && n > 0
		conn.PageInfo.HasPreviousPage = last != nil && n > 0
	}
	return nil
}

// countsKey holds the request's countsOnce in the context.
type countsKey struct{}

// countsOnce reads the viewer's item counters once per operation, however
// many users' item connections ask for their totals.
type countsOnce struct {
	once   sync.Once
	counts service.ItemCounts
	err    error
}

// WithCountsOnce is the operation middleware that gives an operation its own
// cache of the viewer's item counters (countsOnce); the server
// (graph/server) runs every operation through it. Without it, each user's
// item connection reads the counters again.
func WithCountsOnce(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, countsKey{}, &countsOnce{}))
}

// userItemsTotal is the total of one user's item connection: the user's
// counters (of the status asked for), or 0 when `where` names another owner.
// A non-admin reads only their own counters, as privacy shows them only
// their own items.
func (r *Resolver) userItemsTotal(ctx context.Context, userID string, c counted) (int, error) {
	if c.userID != "" && c.userID != userID {
		return 0, nil
	}
	co, ok := ctx.Value(countsKey{}).(*countsOnce)
	if !ok {
		co = &countsOnce{}
	}
	co.once.Do(func() { co.counts, co.err = r.svc.ItemCounts(ctx) })
	if co.err != nil {
		return 0, co.err
	}
	return co.counts.Total(userID, c.status), nil
}
