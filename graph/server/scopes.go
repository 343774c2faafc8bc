package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
)

// writeScope refuses a mutation other than login by a read-only key with
// PERMISSION_DENIED (403 over HTTP, as on REST), before it runs, on every
// transport: POST, SSE and WebSocket (GET takes queries only). On a socket
// the viewer is the one its latest key check found.
type writeScope struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = writeScope{}

// ExtensionName implements graphql.HandlerExtension.
func (writeScope) ExtensionName() string { return "WriteScope" }

// Validate implements graphql.HandlerExtension.
func (writeScope) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (writeScope) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Operation
	if op == nil || op.Operation != ast.Mutation || onlyLogin(opCtx, op) {
		return nil
	}
	if s := socketFrom(ctx); s != nil {
		if v := s.currentViewer(); v.UserID != "" {
			ctx = viewer.NewContext(ctx, v)
		}
	}
	err := service.RequireWrite(ctx)
	if err == nil {
		return nil
	}
	if a := accountFrom(ctx); a != nil {
		a.status = http.StatusForbidden
	}
	var e *apperr.Error
	errors.As(err, &e)
	return refusal(e)
}

// onlyLogin reports whether every root field of a mutation is login (or
// __typename), which an anonymous caller may send too.
func onlyLogin(opCtx *graphql.OperationContext, op *ast.OperationDefinition) bool {
	for _, f := range graphql.CollectFields(opCtx, op.SelectionSet, []string{"Mutation"}) {
		if f.Name != "login" && f.Name != "__typename" {
			return false
		}
	}
	return true
}
