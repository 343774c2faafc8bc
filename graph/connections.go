package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// entgql's generated pagination and field collection find a connection's
// edges, node, pageInfo and totalCount by response key, not by field name:
// an aliased `e: edges { node { id } }` reads to them as no edges at all (an
// empty page), and `pageInfo` selected without edges as a page not worth
// loading (no cursors, and hasNextPage from a count that ignores `after`).
// withCanonicalConnections hands them a selection in which those fields
// answer to their own names (repeats merge, as in field collection) and a
// pageInfo without edges brings edges { cursor } with it, so that the page
// is read and its cursors built. The response keeps the client's aliases:
// the executor renders from the document, not from this copy.

// Field names of an edge, as entgql's pagination knows them.
const (
	nodeField   = "node"
	cursorField = "cursor"
)

// withCanonicalConnections returns ctx with the current field's selection
// made canonical for entgql (above). The original selection is shared by
// every request of the same document, so the changed path is copied, never
// edited.
func withCanonicalConnections(ctx context.Context) context.Context {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return ctx
	}
	oc := graphql.GetOperationContext(ctx)
	sel, changed := canonicalSelection(oc, fc.Field.Selections, isConnection(fc.Field.Definition))
	if !changed {
		return ctx
	}
	cp := *fc
	cp.Field.Selections = sel
	ctx = graphql.WithFieldContext(ctx, &cp)
	cp.Parent = fc.Parent // a sibling of fc, not its child: the path stays the same
	return ctx
}

// isConnection reports whether a field's type is a Relay connection.
func isConnection(def *ast.FieldDefinition) bool {
	return def != nil && strings.HasSuffix(def.Type.Name(), "Connection")
}

// canonicalSelection is set with the fields of every connection in it (set
// itself when conn) and of their edges renamed to their own names, and
// edges { cursor } added beside a pageInfo that has no edges; ok when it
// differs from set. Fragment spreads on the way are inlined so that the
// shared fragment stays as it is.
func canonicalSelection(oc *graphql.OperationContext, set ast.SelectionSet, conn bool) (ast.SelectionSet, bool) {
	out := make(ast.SelectionSet, 0, len(set)+1)
	changed := false
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			inEdge := conn && s.Name == edgesField
			child, ok := canonicalSelection(oc, s.SelectionSet, isConnection(s.Definition))
			if inEdge {
				child, ok = canonicalEdge(oc, child, ok)
			}
			rename := conn && s.Alias != s.Name &&
				(s.Name == edgesField || s.Name == pageInfoField || s.Name == totalCountField)
			if ok || rename {
				cp := *s
				cp.SelectionSet = child
				if rename {
					cp.Alias = cp.Name
				}
				sel, changed = &cp, true
			}
		case *ast.InlineFragment:
			if child, ok := canonicalSelection(oc, s.SelectionSet, conn); ok {
				cp := *s
				cp.SelectionSet = child
				sel, changed = &cp, true
			}
		case *ast.FragmentSpread:
			def := oc.Doc.Fragments.ForName(s.Name)
			if def == nil {
				break
			}
			if child, ok := canonicalSelection(oc, def.SelectionSet, conn); ok {
				sel, changed = inlined(s, def, child), true
			}
		}
		out = append(out, sel)
	}
	if conn {
		var pageInfo *ast.Field
		edges := false
		for _, f := range graphql.CollectFields(oc, out, nil) {
			switch f.Name {
			case edgesField:
				edges = true
			case pageInfoField:
				pageInfo = f.Field
			}
		}
		if pageInfo != nil && !edges {
			out = append(out, &ast.Field{
				Alias: edgesField, Name: edgesField,
				ObjectDefinition: pageInfo.ObjectDefinition,
				SelectionSet:     ast.SelectionSet{&ast.Field{Alias: cursorField, Name: cursorField}},
			})
			changed = true
		}
	}
	if !changed {
		return set, false
	}
	return out, true
}

// canonicalEdge renames node and cursor in the selection of an edge (set,
// already canonical below; changed says whether it differs from the
// document's).
func canonicalEdge(oc *graphql.OperationContext, set ast.SelectionSet, changed bool) (ast.SelectionSet, bool) {
	var out ast.SelectionSet
	for i, sel := range set {
		var repl ast.Selection
		switch s := sel.(type) {
		case *ast.Field:
			if (s.Name == nodeField || s.Name == cursorField) && s.Alias != s.Name {
				cp := *s
				cp.Alias = cp.Name
				repl = &cp
			}
		case *ast.InlineFragment:
			if child, ok := canonicalEdge(oc, s.SelectionSet, false); ok {
				cp := *s
				cp.SelectionSet = child
				repl = &cp
			}
		case *ast.FragmentSpread:
			def := oc.Doc.Fragments.ForName(s.Name)
			if def == nil {
				break
			}
			if child, ok := canonicalEdge(oc, def.SelectionSet, false); ok {
				repl = inlined(s, def, child)
			}
		}
		if repl == nil {
			if out != nil {
				out = append(out, sel)
			}
			continue
		}
		if out == nil {
			out = append(make(ast.SelectionSet, 0, len(set)), set[:i]...)
		}
		out = append(out, repl)
	}
	if out == nil {
		return set, changed
	}
	return out, true
}

// inlined is the fragment spread s of def as an inline fragment selecting
// set: a changed copy of a fragment's selection for one field, where the
// fragment itself is shared by every field that spreads it.
func inlined(s *ast.FragmentSpread, def *ast.FragmentDefinition, set ast.SelectionSet) *ast.InlineFragment {
	return &ast.InlineFragment{
		TypeCondition:    def.TypeCondition,
		Directives:       s.Directives,
		SelectionSet:     set,
		ObjectDefinition: def.Definition,
		Position:         s.Position,
	}
}
