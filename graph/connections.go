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
	return withSelection(ctx, fc, sel)
}

// withSelection returns ctx with the current field, fc, selecting sel: a
// copy of fc beside it, not below it, so that the path stays the same.
func withSelection(ctx context.Context, fc *graphql.FieldContext, sel ast.SelectionSet) context.Context {
	cp := *fc
	cp.Field.Selections = sel
	ctx = graphql.WithFieldContext(ctx, &cp)
	cp.Parent = fc.Parent
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
	var out ast.SelectionSet // nil while it would equal set
	for i, sel := range set {
		repl := canonicalOne(oc, sel, conn)
		if repl != nil && out == nil {
			out = append(make(ast.SelectionSet, 0, len(set)+1), set[:i]...)
		}
		switch {
		case repl != nil:
			out = append(out, repl)
		case out != nil:
			out = append(out, sel)
		}
	}
	if conn {
		cur := set
		if out != nil {
			cur = out
		}
		if pageInfo := pageInfoWithoutEdges(oc, cur); pageInfo != nil {
			if out == nil {
				out = append(make(ast.SelectionSet, 0, len(set)+1), set...)
			}
			out = append(out, &ast.Field{
				Alias: edgesField, Name: edgesField,
				ObjectDefinition: pageInfo.ObjectDefinition,
				SelectionSet:     ast.SelectionSet{&ast.Field{Alias: cursorField, Name: cursorField}},
			})
		}
	}
	if out == nil {
		return set, false
	}
	return out, true
}

// canonicalOne is sel made canonical (see canonicalSelection), or nil when
// it already is; conn says whether sel is in a connection's selection.
func canonicalOne(oc *graphql.OperationContext, sel ast.Selection, conn bool) ast.Selection {
	switch s := sel.(type) {
	case *ast.Field:
		child, ok := canonicalSelection(oc, s.SelectionSet, isConnection(s.Definition))
		if conn && s.Name == edgesField {
			child, ok = canonicalEdge(oc, child, ok)
		}
		rename := conn && s.Alias != s.Name &&
			(s.Name == edgesField || s.Name == pageInfoField || s.Name == totalCountField)
		if !ok && !rename {
			return nil
		}
		cp := *s
		cp.SelectionSet = child
		if rename {
			cp.Alias = cp.Name
		}
		return &cp
	case *ast.InlineFragment:
		if child, ok := canonicalSelection(oc, s.SelectionSet, conn); ok {
			cp := *s
			cp.SelectionSet = child
			return &cp
		}
	case *ast.FragmentSpread:
		if def := oc.Doc.Fragments.ForName(s.Name); def != nil {
			if child, ok := canonicalSelection(oc, def.SelectionSet, conn); ok {
				return inlined(s, def, child)
			}
		}
	}
	return nil
}

// pageInfoWithoutEdges is the pageInfo field of a connection's selection
// set when the set selects no edges, or nil.
func pageInfoWithoutEdges(oc *graphql.OperationContext, set ast.SelectionSet) *ast.Field {
	var pageInfo *ast.Field
	for _, sel := range set {
		f, ok := sel.(*ast.Field)
		if !ok || len(f.Directives) > 0 {
			// Fragments and @skip/@include: as field collection reads them.
			pageInfo = nil
			for _, f := range graphql.CollectFields(oc, set, nil) {
				switch f.Name {
				case edgesField:
					return nil
				case pageInfoField:
					pageInfo = f.Field
				}
			}
			return pageInfo
		}
		switch f.Name {
		case edgesField:
			return nil
		case pageInfoField:
			pageInfo = f
		}
	}
	return pageInfo
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
