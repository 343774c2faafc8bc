package server

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/internal/apperr"
)

// maxVariableDepth is how deeply the objects and lists of one variable's
// value may nest. The deepest value the schema can take is a where filter
// nested service.MaxFilterDepth levels, two JSON levels each
// ({"and": [{…}]}), so 32 refuses nothing that could run.
const maxVariableDepth = 32

// variableDepth refuses variables nested deeper than maxVariableDepth
// before gqlgen coerces them. gqlgen's coercion (gqlparser's
// validator.VariableValues) walks every field of an input type at every
// level, so a deep where in a body well within its size limit cost much
// CPU there (docs/limits.md, Filters) before the filter's own bound could
// refuse it, with or without a token, and a request without one was
// refused 401 without spending a point.
// This runs first, on every transport, and walks no further than the
// bound.
type variableDepth struct{}

var (
	_ graphql.HandlerExtension          = variableDepth{}
	_ graphql.OperationParameterMutator = variableDepth{}
)

// ExtensionName implements graphql.HandlerExtension.
func (variableDepth) ExtensionName() string { return "VariableDepth" }

// Validate implements graphql.HandlerExtension.
func (variableDepth) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (variableDepth) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	for _, v := range p.Variables {
		if tooDeep(v, 1) {
			return refusal(apperr.Validation("variables",
				fmt.Sprintf("must not nest objects and lists more than %d levels deep", maxVariableDepth)))
		}
	}
	return nil
}

// tooDeep reports whether v nests objects and lists deeper than
// maxVariableDepth, counting v at depth.
func tooDeep(v any, depth int) bool {
	switch x := v.(type) {
	case map[string]any:
		return depth > maxVariableDepth || anyTooDeep(maps.Values(x), depth+1)
	case []any:
		return depth > maxVariableDepth || anyTooDeep(slices.Values(x), depth+1)
	}
	return false
}

// anyTooDeep reports whether any of vs is tooDeep at depth.
func anyTooDeep(vs iter.Seq[any], depth int) bool {
	for v := range vs {
		if tooDeep(v, depth) {
			return true
		}
	}
	return false
}
