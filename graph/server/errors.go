package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/internal/apperr"
)

// GraphQL's own failures (a query that does not parse or does not fit the
// schema, a bad argument value) are the client's: they become
// VALIDATION_ERROR, as a malformed body does on REST.
var clientCodes = map[string]bool{
	"":                          true,
	"GRAPHQL_PARSE_FAILED":      true,
	"GRAPHQL_VALIDATION_FAILED": true,
}

// appError maps an error a resolver returned (the service's, ent's, the
// database's) to an *apperr.Error, as REST's renderError does, so that the
// client sees the contract's codes. It reports false for an error gqlgen or
// entgql built for the client (*gqlerror.Error), which is shown as it is.
// Mapping here, once per error, rather than in a field middleware spares
// every field of every response a middleware call.
func appError(ctx context.Context, err error) (*apperr.Error, bool) {
	e := apperr.FromRequest(ctx, err)
	var gqlErr *gqlerror.Error
	if e.Code == apperr.CodeInternal && errors.As(err, &gqlErr) {
		return nil, false
	}
	return e, true
}

// presenter renders errors for the response and logs the ones that are ours.
type presenter struct {
	log    *slog.Logger
	schema *ast.Schema
}

// present renders err with extensions.code: the REST code of an
// *apperr.Error (and its details, field and reason for validation), or
// VALIDATION_ERROR for GraphQL's own client errors. The message of an
// internal error never carries its cause. A resolver's error names its
// field in the service's words, which graph.FieldName spells as GraphQL
// does.
func (p presenter) present(ctx context.Context, err error) *gqlerror.Error {
	var path ast.Path
	var outer *gqlerror.Error
	if errors.As(err, &outer) {
		path = outer.Path
	}
	var e *apperr.Error
	if arg := badArgument(ctx, p.schema, outer); arg != nil {
		e = arg
	} else if outer != nil && outer.Err != nil && len(outer.Locations) > 0 {
		// A resolver's error, wrapped by gqlgen with its path and the
		// field's location (an argument that does not coerce has none: it
		// is the client's, below).
		if e, _ = appError(ctx, outer.Err); e != nil {
			e = e.Renamed(graph.FieldName(e.Field()))
		}
	} else {
		errors.As(err, &e)
	}
	if e != nil {
		if e.Code == apperr.CodeInternal || e.Code == apperr.CodeUnavailable {
			p.log.ErrorContext(ctx, "graphql request failed", "code", e.Code, "path", fmt.Sprint(path), "err", err)
		}
		ext := make(map[string]any, len(e.Details)+1)
		for k, v := range e.Details {
			ext[k] = v
		}
		ext["code"] = e.Code
		return &gqlerror.Error{Message: e.Message, Path: path, Extensions: ext}
	}
	if outer != nil {
		out := *outer
		out.Extensions = make(map[string]any, len(outer.Extensions)+1)
		for k, v := range outer.Extensions {
			out.Extensions[k] = v
		}
		code, _ := out.Extensions["code"].(string)
		if clientCodes[code] {
			out.Extensions["code"] = apperr.CodeValidation
			if graphql.HasOperationContext(ctx) {
				opCtx := graphql.GetOperationContext(ctx)
				variableField(p.schema, opCtx.Doc, opCtx.Operation, &out)
			}
		}
		return &out
	}
	// Every error reaches here through gqlgen as a *gqlerror.Error; should
	// one not, it is ours.
	return p.present(ctx, apperr.Internal(err))
}

// badArgument recognises an argument value that gqlgen could not decode
// (a cursor that is not one of ours, an enum name in a variable in another
// case than the schema's, which GraphQL's validator lets through: "active"
// for ACTIVE): gqlgen reports it on the path of the field plus the
// argument's name, and the input fields and list indexes down to the value,
// before the field's arguments are set. It returns the VALIDATION_ERROR
// naming the argument or the input field holding the value (an enum's
// reason lists its values, as for a value the validator refuses), or nil.
func badArgument(ctx context.Context, schema *ast.Schema, err *gqlerror.Error) *apperr.Error {
	if err == nil || len(err.Path) == 0 {
		return nil
	}
	var e *apperr.Error
	if errors.As(err, &e) {
		return nil
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Args != nil || fc.Field.Definition == nil {
		return nil
	}
	at := fc.Path()
	if len(err.Path) <= len(at) || !slices.Equal(err.Path[:len(at)], at) {
		return nil
	}
	name, ok := err.Path[len(at)].(ast.PathName)
	if !ok {
		return nil
	}
	arg := fc.Field.Definition.Arguments.ForName(string(name))
	if arg == nil {
		return nil
	}
	if arg.Type.Name() == "Cursor" && len(err.Path) == len(at)+1 {
		return graph.CursorError(arg.Name)
	}
	field, typ := arg.Name, arg.Type
	for _, p := range err.Path[len(at)+1:] {
		switch p := p.(type) {
		case ast.PathName:
			field = string(p)
			if typ != nil && schema != nil {
				typ = fieldType(schema.Types[typ.Name()], field)
			}
		case ast.PathIndex:
			if typ != nil {
				typ = typ.Elem
			}
		}
	}
	reason := err.Message
	if err.Err != nil {
		reason = err.Err.Error()
	}
	if typ != nil && schema != nil {
		if def := schema.Types[typ.Name()]; def != nil && def.Kind == ast.Enum {
			reason = reasonFor(def, reason)
		}
	}
	return apperr.Validation(field, reason)
}

// recover turns a resolver's panic into INTERNAL_ERROR; the panic and its
// stack go to the log only.
func (p presenter) recover(ctx context.Context, v any) error {
	p.log.ErrorContext(ctx, "graphql panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return apperr.Internal(fmt.Errorf("panic: %v", v))
}
