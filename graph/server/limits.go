package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/internal/apperr"
)

// CodeComplexityLimit is the code of an operation that asks for more work
// than the limits allow: over the complexity limit, or with a response
// over maxResponseBytes (extensions.reason "response_size"). With
// DEPTH_LIMIT_EXCEEDED it is one of GraphQL's two codes beside REST's.
const CodeComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"

// Bounds of one request that no setting changes (docs/limits.md).
const (
	// parserTokenLimit bounds the tokens of a query document, so that
	// parsing and validating one costs little whatever the body holds:
	// GraphiQL's schema query is about 300 tokens.
	parserTokenLimit = 10_000
	// maxErrors bounds the errors of one response; the rest are counted
	// in a last error.
	maxErrors = 20
	// maxResponseBytes bounds the data of one query's response.
	maxResponseBytes = 4 << 20
)

// costStatsKey is where the cost of an operation waits, in its
// OperationContext's Stats, for the response's extensions.
const costStatsKey = "cost"

// costLimit prices every operation before it runs (cost.go), refuses one
// over the complexity limit or not allowed without a token, and charges its
// points to the caller's rate limit.
type costLimit struct {
	schema *ast.Schema
	max    int
	// anonymousIntrospection lets a request without a token read the
	// schema (the playground is on); login is always allowed.
	anonymousIntrospection bool
	// prices are the prices of operations without variables.
	prices *opMemo[*cost]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = costLimit{}

// ExtensionName implements graphql.HandlerExtension.
func (costLimit) ExtensionName() string { return "CostLimit" }

// Validate implements graphql.HandlerExtension.
func (costLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext prices, checks and charges the operation.
func (l costLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	a := accountFrom(ctx)
	if err := ctx.Err(); err != nil {
		// Past its deadline already (REQUEST_TIMEOUT): gqlgen would answer
		// an empty body for a context that is done, so refuse it here.
		if a != nil {
			a.status = http.StatusServiceUnavailable
		}
		return refusal(apperr.Timeout(err))
	}
	c := l.price(opCtx)
	opCtx.Stats.SetExtension(costStatsKey, c)
	if c.Over != "" && c.Invalid == nil {
		return l.overError(c)
	}
	if a == nil {
		if c.Invalid != nil {
			return refusal(c.Invalid)
		}
		return nil // served without Mount (tests of the handler alone)
	}
	if a.anonymous {
		if err := l.anonymousAllowed(opCtx.Operation.Operation, c); err != nil {
			a.status = http.StatusUnauthorized
			return refusal(err)
		}
	}
	d := a.charge(ctx, c.Points)
	if !d.Allowed {
		a.status = http.StatusTooManyRequests
		msg := fmt.Sprintf("this operation costs %d points and the %s window has %d left", c.Points, d.Window, d.Remaining)
		if d.TooLarge {
			msg = fmt.Sprintf("this operation costs %d points, more than the %s window's whole limit of %d: split it", c.Points, d.Window, d.Limit)
		}
		if a.anonymous {
			msg += " (requests without a token are limited per client address)"
		}
		return refusal(apperr.RateLimited(msg, d.Window, d.Limit, d.RetryAfter))
	}
	if c.Invalid != nil {
		// Refused after it was charged what it was priced at so far: a
		// bad argument is not a free way to make the server work.
		return refusal(c.Invalid)
	}
	return nil
}

// price prices the operation. An operation without variables costs the
// same on every request: its price is kept with it (l.prices) and shared,
// read-only, by every request of the same document.
func (l costLimit) price(opCtx *graphql.OperationContext) *cost {
	compute := func() *cost {
		c := price(l.schema, opCtx.Operation, opCtx.Variables, l.max)
		return &c
	}
	if l.prices == nil || len(opCtx.Operation.VariableDefinitions) > 0 {
		return compute()
	}
	return l.prices.Get(opCtx.Operation, compute)
}

func (l costLimit) overError(c *cost) *gqlerror.Error {
	var err *gqlerror.Error
	switch c.Over {
	case "width":
		err = gqlerror.Errorf("a selection set has more than %d fields (aliases and fragments included)", maxSelectionWidth)
	case "introspection":
		err = gqlerror.Errorf("the operation reads more than %d fields of the schema", maxIntrospectionFields)
	default:
		err = gqlerror.Errorf("operation has complexity %d or more, which exceeds the limit of %d", c.Complexity, l.max)
	}
	errcode.Set(err, CodeComplexityLimit)
	if c.Over == "complexity" {
		err.Extensions["cost"] = c.Complexity
		err.Extensions["limit"] = l.max
	}
	return err
}

// anonymousAllowed: without a token an operation may only log in and,
// with the playground on, read the schema.
func (l costLimit) anonymousAllowed(op ast.Operation, c *cost) *apperr.Error {
	for _, name := range c.RootFields {
		switch {
		case name == "__typename":
		case op == ast.Mutation && name == "login":
		case op == ast.Query && (name == "__schema" || name == "__type") && l.anonymousIntrospection:
		case op == ast.Query && (name == "__schema" || name == "__type"):
			return apperr.Unauthorized("reading the schema needs a token while the playground is off")
		default:
			return apperr.Unauthorized(fmt.Sprintf("%s needs a token: without one, only login and introspection", name))
		}
	}
	return nil
}

// refusal carries an *apperr.Error through gqlgen to the presenter. Its
// code is set here too: gqlgen's WebSocket transport sends the errors of an
// operation refused before it runs without presenting them.
func refusal(err *apperr.Error) *gqlerror.Error {
	ext := map[string]any{"code": err.Code}
	for k, v := range err.Details {
		ext[k] = v
	}
	return &gqlerror.Error{Message: err.Message, Err: err, Extensions: ext}
}

// InterceptResponse adds extensions.cost, bounds the number of errors and
// refuses a query whose data outgrew maxResponseBytes.
func (l costLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return capErrors(resp)
	}
	opCtx := graphql.GetOperationContext(ctx)
	if len(resp.Data) > maxResponseBytes && opCtx.Operation != nil && opCtx.Operation.Operation == ast.Query {
		err := gqlerror.Errorf("the response would be larger than %d bytes: ask for fewer fields or smaller pages", maxResponseBytes)
		err.Extensions = map[string]any{"code": CodeComplexityLimit, "reason": "response_size", "limit": maxResponseBytes}
		resp.Data = []byte("null")
		resp.Errors = gqlerror.List{err}
	}
	if c, ok := opCtx.Stats.GetExtension(costStatsKey).(*cost); ok && c.Over != "width" {
		ext := costExtension{Complexity: c.Complexity, Limit: l.max, Points: c.Points}
		if a := accountFrom(ctx); a != nil && a.charged && a.decision.Checked {
			ext.Remaining = &a.decision.Remaining
			ext.Window = a.decision.Window
		}
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions[costStatsKey] = ext
	}
	return capErrors(resp)
}

// costExtension is extensions.cost: a struct rather than a map, which
// encodes without sorting its keys on every response. Remaining and Window
// are there when the request was charged against a checked limit.
type costExtension struct {
	Complexity int    `json:"complexity"`
	Limit      int    `json:"limit"`
	Points     int    `json:"points"`
	Remaining  *int64 `json:"remaining,omitempty"`
	Window     string `json:"window,omitempty"`
}

// appendJSON appends c as json.Marshal writes it, and reports whether it
// could: a window name other than a plain word ("minute", "hour") is left
// to json.Marshal, which escapes it.
func (c costExtension) appendJSON(b []byte) ([]byte, bool) {
	for i := 0; i < len(c.Window); i++ {
		if ch := c.Window[i]; ch < 'a' || ch > 'z' {
			return b, false
		}
	}
	b = append(b, `{"complexity":`...)
	b = strconv.AppendInt(b, int64(c.Complexity), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(c.Limit), 10)
	b = append(b, `,"points":`...)
	b = strconv.AppendInt(b, int64(c.Points), 10)
	if c.Remaining != nil {
		b = append(b, `,"remaining":`...)
		b = strconv.AppendInt(b, *c.Remaining, 10)
	}
	if c.Window != "" {
		b = append(b, `,"window":"`...)
		b = append(b, c.Window...)
		b = append(b, '"')
	}
	return append(b, '}'), true
}

// capErrors keeps the first maxErrors errors and counts the others in one
// last error, so that a query of a thousand mistakes answers in a page.
func capErrors(resp *graphql.Response) *graphql.Response {
	if resp == nil || len(resp.Errors) <= maxErrors {
		return resp
	}
	more := len(resp.Errors) - (maxErrors - 1)
	code := apperr.CodeValidation
	if c, ok := resp.Errors[0].Extensions["code"].(string); ok && c != "" {
		code = apperr.Code(c)
	}
	resp.Errors = append(resp.Errors[:maxErrors-1:maxErrors-1], &gqlerror.Error{
		Message:    fmt.Sprintf("%d more errors not shown", more),
		Extensions: map[string]any{"code": code},
	})
	return resp
}
