package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// operationSpans makes a span of every GraphQL operation (DESIGN §9), under
// the HTTP request's span: named by the operation's type and name, it
// carries the price the operation was charged and the codes of the errors
// it answered. It intercepts responses, not fields (the rewritten executor
// calls no field middleware): for a query or a mutation the response is
// the whole execution, resolvers and their SQL included; an operation
// refused before it ran (parse, validation, cost, rate limit) still has
// its span; a subscription has one per event it sends.
type operationSpans struct{ tracer trace.Tracer }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = operationSpans{}

// ExtensionName implements graphql.HandlerExtension.
func (operationSpans) ExtensionName() string { return "OperationSpans" }

// Validate implements graphql.HandlerExtension.
func (operationSpans) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse implements graphql.ResponseInterceptor.
func (o operationSpans) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	name, attrs := "graphql", make([]attribute.KeyValue, 0, 5)
	var opCtx *graphql.OperationContext
	if graphql.HasOperationContext(ctx) {
		opCtx = graphql.GetOperationContext(ctx)
	}
	var op *ast.OperationDefinition
	if opCtx != nil {
		op = opCtx.Operation
		if op == nil && opCtx.RawQuery != "" {
			// Refused before it ran: gqlgen keeps no document of an
			// operation that failed validation. Parsing it again, within
			// the same token limit, costs only refusals.
			if doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: opCtx.RawQuery}, parserTokenLimit); err == nil {
				op = doc.Operations.ForName(opCtx.OperationName)
			}
		}
	}
	if op != nil {
		typ := string(op.Operation)
		opName := opCtx.OperationName
		if opName == "" {
			opName = op.Name
		}
		name = typ
		attrs = append(attrs, attribute.String("graphql.operation.type", typ))
		if opName != "" {
			name += " " + opName
			attrs = append(attrs, attribute.String("graphql.operation.name", opName))
		}
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	defer span.End()
	resp := next(ctx)
	if opCtx != nil {
		if c, ok := opCtx.Stats.GetExtension(costStatsKey).(*cost); ok {
			span.SetAttributes(
				attribute.Int("graphql.operation.price.points", c.Points),
				attribute.Int("graphql.operation.price.complexity", c.Complexity),
			)
		}
	}
	if resp != nil && len(resp.Errors) > 0 {
		var errCodes []string
		for _, e := range resp.Errors {
			// The contract's codes are apperr.Code values or strings.
			if c, ok := e.Extensions["code"]; ok && !slices.Contains(errCodes, fmt.Sprint(c)) {
				code := fmt.Sprint(c)
				errCodes = append(errCodes, code)
			}
		}
		span.SetAttributes(attribute.StringSlice("graphql.error.codes", errCodes))
		span.SetStatus(codes.Error, fmt.Sprintf("%d error(s): %v", len(resp.Errors), errCodes))
	}
	return resp
}
