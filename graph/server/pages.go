package server

import (
	"context"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// Every connection of the schema (Query.items, Query.users, User.items and
// any added later) is found from the schema itself (isConnection), never
// from a list: its first and last are checked before the operation runs
// (pageArgs, from the pricer), and one asked for with neither gets the
// default page (pageDefaults), which ent's field collection then loads for
// nested connections too.

// isConnection reports whether def is a Relay connection field: its type is
// an object named …Connection with edges and pageInfo, and it takes first,
// and last if it pages backwards too (the lists of entgql do; the webhooks,
// deliveries and events pages go forwards only, as REST's do).
func isConnection(schema *ast.Schema, def *ast.FieldDefinition) bool {
	if def == nil || def.Type == nil || def.Type.Elem != nil {
		return false
	}
	t := schema.Types[def.Type.Name()]
	if t == nil || t.Kind != ast.Object || !strings.HasSuffix(t.Name, "Connection") ||
		t.Fields.ForName("edges") == nil || t.Fields.ForName("pageInfo") == nil {
		return false
	}
	for _, name := range []string{"first", "last"} {
		a := def.Arguments.ForName(name)
		if a == nil && name == "last" {
			continue
		}
		if a == nil || a.Type.Elem != nil || a.Type.Name() != "Int" {
			return false
		}
	}
	return true
}

// pageArgs reads first and last of a connection field as gqlgen will decode
// them (graphql.UnmarshalInt: a variable sent as the JSON string "100" is
// 100) and checks them: each from 0 to service.MaxPageSize, not both.
func pageArgs(f *ast.Field, vars map[string]any) (first, last *int, err *apperr.Error) {
	read := func(name string) (*int, *apperr.Error) {
		v := graph.Argument(f, name, vars)
		if v == nil {
			return nil, nil
		}
		n, err := graphql.UnmarshalInt(v)
		if err != nil || n < 0 || n > service.MaxPageSize {
			return nil, graph.PageSizeError(name)
		}
		return &n, nil
	}
	if first, err = read("first"); err != nil {
		return nil, nil, err
	}
	if last, err = read("last"); err != nil {
		return nil, nil, err
	}
	if first != nil && last != nil {
		return nil, nil, apperr.Validation("last", "cannot be combined with first: page forwards with first and after, backwards with last and before")
	}
	return first, last, nil
}

// pageSize is the number of nodes a connection field may return, for the
// complexity estimate.
func pageSize(first, last *int) int {
	switch {
	case first != nil && *first >= 0:
		return min(*first, service.MaxPageSize)
	case last != nil && *last >= 0:
		return min(*last, service.MaxPageSize)
	}
	return service.DefaultPageSize
}

// pageDefaults gives every connection field asked for without first or
// last an explicit `first: 20`, in a copy of the operation the request
// runs, so that what reads the field's arguments from the document (the
// resolver's arguments, ent's field collection, which loads a nested
// connection such as owner { items } for every parent at once, and the
// pricer) sees the same bounded page. The parsed document is shared by
// every request of it and is never edited: the changed path is copied, and
// a fragment on it inlined. An operation whose defaults do not depend on
// its variables is rewritten once and kept with it (memo).
type pageDefaults struct {
	schema *ast.Schema
	memo   *opMemo[defaulted]
}

// defaulted is an operation with its default pages: op, or nil when it
// needs none; dynamic when that depends on the variables.
type defaulted struct {
	op      *ast.OperationDefinition
	dynamic bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = pageDefaults{}

// ExtensionName implements graphql.HandlerExtension.
func (pageDefaults) ExtensionName() string { return "PageDefaults" }

// Validate implements graphql.HandlerExtension.
func (pageDefaults) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext points the request at its operation with default
// pages.
func (d pageDefaults) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	compute := func() defaulted { return withDefaultPages(d.schema, opCtx.Doc, opCtx.Operation, opCtx.Variables) }
	r := d.memo.Get(opCtx.Operation, compute)
	if r.dynamic {
		r = compute()
	}
	if r.op != nil {
		opCtx.Operation = r.op
	}
	return nil
}

// withDefaultPages returns a copy of op with default pages, or no op when
// op needs none.
func withDefaultPages(schema *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) defaulted {
	w := pageRewriter{schema: schema, doc: doc, vars: vars, fragments: map[string]ast.SelectionSet{}}
	set, changed := w.set(op.SelectionSet)
	if !changed {
		return defaulted{dynamic: w.dynamic}
	}
	cp := *op
	cp.SelectionSet = set
	return defaulted{op: &cp, dynamic: w.dynamic}
}

type pageRewriter struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
	vars   map[string]any
	// dynamic: a page size comes from a variable, so the defaults depend
	// on the request.
	dynamic bool
	// fragments are the fragments already rewritten (nil: unchanged), so
	// that each is walked once however often it is spread.
	fragments map[string]ast.SelectionSet
}

// set returns set with default pages, and whether it changed.
func (w *pageRewriter) set(set ast.SelectionSet) (ast.SelectionSet, bool) {
	var out ast.SelectionSet // made at the first change
	for i, sel := range set {
		var repl ast.Selection
		switch s := sel.(type) {
		case *ast.Field:
			cp, changed := *s, false
			if s.Definition != nil && isConnection(w.schema, s.Definition) && w.unpaged(s) {
				cp.Arguments, changed = w.withFirst(s), true
			}
			if child, ok := w.set(s.SelectionSet); ok {
				cp.SelectionSet, changed = child, true
			}
			if changed {
				repl = &cp
			}
		case *ast.InlineFragment:
			if child, ok := w.set(s.SelectionSet); ok {
				cp := *s
				cp.SelectionSet = child
				repl = &cp
			}
		case *ast.FragmentSpread:
			def := s.Definition
			if def == nil && w.doc != nil {
				def = w.doc.Fragments.ForName(s.Name)
			}
			if def == nil {
				break
			}
			child, seen := w.fragments[s.Name]
			if !seen {
				w.fragments[s.Name] = nil // validation refused cycles; this ends one anyway
				child, _ = w.set(def.SelectionSet)
				w.fragments[s.Name] = child
			}
			if child != nil {
				repl = &ast.InlineFragment{
					TypeCondition:    def.TypeCondition,
					Directives:       s.Directives,
					SelectionSet:     child,
					ObjectDefinition: def.Definition,
					Position:         s.Position,
				}
			}
		}
		switch {
		case repl != nil:
			if out == nil {
				out = append(make(ast.SelectionSet, 0, len(set)), set[:i]...)
			}
			out = append(out, repl)
		case out != nil:
			out = append(out, sel)
		}
	}
	return out, out != nil
}

// unpaged reports whether a connection field has neither first nor last.
func (w *pageRewriter) unpaged(f *ast.Field) bool {
	for _, name := range []string{"first", "last"} {
		a := f.Arguments.ForName(name)
		if a == nil || a.Value == nil {
			continue
		}
		switch a.Value.Kind {
		case ast.NullValue:
		case ast.Variable:
			w.dynamic = true
			if w.vars[a.Value.Raw] != nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// withFirst returns f's arguments with first: service.DefaultPageSize in place of
// an absent or null first.
func (w *pageRewriter) withFirst(f *ast.Field) ast.ArgumentList {
	args := make(ast.ArgumentList, 0, len(f.Arguments)+1)
	for _, a := range f.Arguments {
		if a.Name != "first" {
			args = append(args, a)
		}
	}
	var typ *ast.Type
	if def := f.Definition.Arguments.ForName("first"); def != nil {
		typ = def.Type
	}
	return append(args, &ast.Argument{
		Name: "first",
		Value: &ast.Value{
			Kind:         ast.IntValue,
			Raw:          strconv.Itoa(service.DefaultPageSize),
			Definition:   w.schema.Types["Int"],
			ExpectedType: typ,
			Position:     f.Position,
		},
		Position: f.Position,
	})
}
