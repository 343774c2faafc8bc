package server

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
)

// fastPaths reports whether es is the executor graph/internal/gqlrewrite
// rewrote onto graph/serial, which adds the SerialFastPaths method to it,
// rather than gqlgen's own (generated with GQLGEN_REWRITE=off). The server
// works on both; only the rewritten one writes the response's data into a
// pooled buffer (postTransport gives it back) and reads fields from their
// objects without the field middleware (guardedServer).
func fastPaths(es graphql.ExecutableSchema) bool {
	r, ok := es.(interface{ SerialFastPaths() bool })
	return ok && r.SerialFastPaths()
}

// guardedServer is gqlgen's handler.Server with Use and AroundFields
// refusing a field middleware when the executor is the rewritten one: its
// fast paths (serial.Value, serial.Field) read a field from its object
// without calling the field middleware, so a tracer or entgql's
// transactioner would silently miss most fields. Refused at start, with
// the way out in the message, rather than half-working.
type guardedServer struct {
	*handler.Server
	fastPaths bool
}

// Use registers ext as handler.Server.Use does; it panics if ext is a
// field middleware (graphql.FieldInterceptor) and the executor is the
// rewritten one.
func (s guardedServer) Use(ext graphql.HandlerExtension) {
	if _, ok := ext.(graphql.FieldInterceptor); ok && s.fastPaths {
		panic(fmt.Sprintf("graph/server: field middleware %q registered on the rewritten GraphQL executor, "+
			"whose fast paths (graph/serial) do not call it for fields read from their objects; "+
			"generate gqlgen's own executor with `GQLGEN_REWRITE=off go generate ./graph` to use it "+
			"(docs/development.md, \"The GraphQL executor rewrite\")", ext.ExtensionName()))
	}
	s.Server.Use(ext)
}

// AroundFields is handler.Server.AroundFields, checked as Use is.
func (s guardedServer) AroundFields(f graphql.FieldMiddleware) {
	s.Use(aroundFields(f))
}

// aroundFields is a field middleware as a handler extension, as gqlgen's
// own AroundFields makes one.
type aroundFields graphql.FieldMiddleware

// ExtensionName implements graphql.HandlerExtension.
func (aroundFields) ExtensionName() string { return "InlineFieldFunc" }

// Validate implements graphql.HandlerExtension.
func (f aroundFields) Validate(graphql.ExecutableSchema) error {
	if f == nil {
		return fmt.Errorf("field middleware is nil")
	}
	return nil
}

// InterceptField implements graphql.FieldInterceptor.
func (f aroundFields) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	return f(ctx, next)
}
