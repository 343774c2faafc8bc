package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// operationDeadline gives every query and mutation a context that ends
// after d (REQUEST_TIMEOUT), whatever carried it: a plain POST or GET, a
// POST answered as Server-Sent Events, or an operation of a graphql-ws
// connection. The HTTP-level deadline (rest's) is lifted from the
// connection of a stream, which must outlive it; without this, a query sent
// over one would run unbounded. A subscription keeps the connection's
// context: its stream lives on, and each database read it makes has a
// deadline of its own (internal/events). On expiry the driver cancels the
// query, and the presenter renders UNAVAILABLE with reason "timeout"
// (apperr.FromRequest), as on REST.
func operationDeadline(d time.Duration) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		op := graphql.GetOperationContext(ctx).Operation
		if d <= 0 || op == nil || op.Operation == ast.Subscription {
			return next(ctx)
		}
		if end, ok := ctx.Deadline(); ok && time.Until(end) <= d {
			// A plain POST or GET has the request's deadline already,
			// which ends first: a second timer would never fire.
			return next(ctx)
		}
		ctx, cancel := context.WithTimeout(ctx, d)
		responses := next(ctx)
		// A query or mutation has one response; the transport's call for
		// it ends the operation.
		return func(ctx context.Context) *graphql.Response {
			defer cancel()
			return responses(ctx)
		}
	}
}
