package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// CodeDepthLimit is the extensions.code of an operation nested too deeply;
// gqlgen's own COMPLEXITY_LIMIT_EXCEEDED is its sibling.
const CodeDepthLimit = "DEPTH_LIMIT_EXCEEDED"

// depthLimit refuses operations nested deeper than max fields, before any
// resolver runs. Introspection fields (__schema, __type) are not counted:
// GraphiQL's own schema query is deeper than any sane data query.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

// ExtensionName implements graphql.HandlerExtension.
func (depthLimit) ExtensionName() string { return "DepthLimit" }

// Validate implements graphql.HandlerExtension.
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext measures the operation about to run.
func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil // the executor reports the unknown operation
	}
	if depth := selectionDepth(op.SelectionSet); depth > d.max {
		err := gqlerror.Errorf("operation has depth %d, which exceeds the limit of %d", depth, d.max)
		errcode.Set(err, CodeDepthLimit)
		return err
	}
	return nil
}

// selectionDepth is the deepest chain of fields in set, through fragments.
// Validation has already refused fragment cycles.
func selectionDepth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if len(s.Name) >= 2 && s.Name[:2] == "__" {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				d = selectionDepth(s.Definition.SelectionSet)
			}
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet)
		}
		deepest = max(deepest, d)
	}
	return deepest
}
