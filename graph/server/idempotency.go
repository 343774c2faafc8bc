package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
)

// Idempotency is httpapi.Idempotent for POST /graphql (DESIGN §7): an
// Idempotency-Key applies to an operation of exactly one mutation field
// other than login, the request being its query, operation name and
// variables. A query, a subscription or login runs as if the header were
// absent (it changes nothing, and a retry of it is safe already; login's
// answer is a token, which nothing keeps); a mutation of several fields is
// refused with VALIDATION_ERROR on Idempotency-Key, since one key cannot
// name several changes (and a WebSocket upgrade refuses the key:
// noKeyOnSockets). Whether the change succeeded is read from the executed
// response (recordOutcome), whatever the framing the client asked for: a
// response with errors, or none, rolls the change back and is not
// recorded, and the key is free again. A replay runs through the executor
// like the first request, priced, charged and checked (writeScope) as the
// viewer is now, and answers the recorded data in place of running the
// mutation (replayed), in the framing the retry asks for.
func Idempotency(svc *service.Service) gin.HandlerFunc {
	return httpapi.Idempotent(svc, httpapi.IdempotencyScope{
		Fingerprint: mutationFingerprint,
		Track:       trackOutcome,
		Replay:      replayThroughExecutor,
	})
}

// outcome is what recordOutcome saw of the one mutation of a keyed request.
type outcome struct {
	record    []byte
	responses int
	ok        bool
}

type outcomeKey struct{}

// trackOutcome implements httpapi.IdempotencyScope.Track.
func trackOutcome(ctx context.Context) (context.Context, func() ([]byte, bool)) {
	o := &outcome{}
	return context.WithValue(ctx, outcomeKey{}, o), func() ([]byte, bool) {
		return o.record, o.ok && o.responses == 1
	}
}

// recordOutcome notes the response of a keyed request's mutation, as the
// executor made it and before any transport frames it: a success is a
// mutation's one response with data and no errors, and its data, as
// {"data": …}, is what a retry replays (its extensions are the retry's
// own: the cost it is charged).
func recordOutcome(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	o, _ := ctx.Value(outcomeKey{}).(*outcome)
	if o == nil || resp == nil {
		return resp
	}
	o.responses++
	op := graphql.GetOperationContext(ctx).Operation
	o.ok = op != nil && op.Operation == ast.Mutation && len(resp.Errors) == 0 &&
		len(resp.Data) > 0 && string(resp.Data) != "null"
	if o.ok {
		o.record = append(append(append(make([]byte, 0, len(resp.Data)+9), `{"data":`...), resp.Data...), '}')
	}
	return resp
}

// replayKey carries, in a replayed request's context, the recorded response
// replayed serves.
type replayKey struct{}

// replayThroughExecutor implements httpapi.IdempotencyScope.Replay: the
// request goes on to gqlgen with its record in the context.
func replayThroughExecutor(c *gin.Context, resp service.IdempotentResponse) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), replayKey{}, &resp))
	c.Next()
}

// replayed serves a replay (replayThroughExecutor) once the operation has
// passed every check before it runs: registered after costLimit and
// writeScope, it marks the response Idempotent-Replayed when they let the
// operation through (before any transport writes its headers), and answers
// the recorded data in place of executing the mutation; costLimit then adds
// the retry's own extensions.cost.
type replayed struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = replayed{}

// ExtensionName implements graphql.HandlerExtension.
func (replayed) ExtensionName() string { return "IdempotentReplay" }

// Validate implements graphql.HandlerExtension.
func (replayed) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (replayed) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	if r, _ := ctx.Value(replayKey{}).(*service.IdempotentResponse); r != nil {
		if a := accountFrom(ctx); a != nil {
			a.c.Header(httpapi.HeaderIdempotentReplayed, "true")
		}
	}
	return nil
}

// InterceptResponse implements graphql.ResponseInterceptor.
func (replayed) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	r, _ := ctx.Value(replayKey{}).(*service.IdempotentResponse)
	if r == nil {
		return next(ctx)
	}
	var rec struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &rec); err != nil || len(rec.Data) == 0 {
		// Recorded by this package, so never: refuse rather than run the
		// mutation a second time.
		return graphql.ErrorResponse(ctx, "the recorded response of this Idempotency-Key cannot be read")
	}
	return &graphql.Response{Data: rec.Data}
}

// noKeyOnSockets refuses an Idempotency-Key on a WebSocket upgrade with 400
// VALIDATION_ERROR before anything else runs: the operations of a socket
// come later, each without headers of its own, so the key could not name
// one of them, and a client that sent it expects a safety it would not get.
func noKeyOnSockets(c *gin.Context) {
	if c.GetHeader("Upgrade") != "" && len(c.Request.Header.Values(httpapi.HeaderIdempotencyKey)) > 0 {
		httpapi.Fail(c, apperr.Validation(httpapi.HeaderIdempotencyKey,
			"is not taken on a WebSocket, whose operations have no headers of their own; send the mutation with its key over POST"))
	}
}

// mutationFingerprint is the fingerprint of a POST /graphql request of one
// mutation field; apply is false for anything else the header does not
// concern. A body gqlgen cannot read is left to it to refuse.
func mutationFingerprint(c *gin.Context, body []byte) (string, bool, error) {
	if c.Request.Method != http.MethodPost {
		return "", false, nil
	}
	var params struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		return "", false, nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: params.Query})
	if err != nil {
		return "", false, nil
	}
	op := doc.Operations.ForName(params.OperationName)
	if op == nil || op.Operation != ast.Mutation || isLogin(op) {
		return "", false, nil
	}
	if len(op.SelectionSet) != 1 {
		return "", false, apperr.Validation("Idempotency-Key", "applies to an operation of exactly one mutation field; send each mutation in a request of its own")
	}
	if _, ok := op.SelectionSet[0].(*ast.Field); !ok {
		return "", false, apperr.Validation("Idempotency-Key", "applies to an operation of exactly one mutation field, written out rather than in a fragment")
	}
	return service.Fingerprint([]byte(http.MethodPost), []byte(Endpoint), []byte(params.Query),
		[]byte(params.OperationName), httpapi.CanonicalJSON(params.Variables)), true, nil
}

// isLogin reports whether op's one root field is login (written out, not in
// a fragment): it changes nothing a retry could repeat.
func isLogin(op *ast.OperationDefinition) bool {
	if len(op.SelectionSet) != 1 {
		return false
	}
	f, ok := op.SelectionSet[0].(*ast.Field)
	return ok && f.Name == "login"
}
