package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
)

// replayPoints is what a replayed mutation spends of the rate limit: the
// point of its one mutation field. Scans in its selection are not run
// again, so not charged again.
const replayPoints = 1

// Idempotency is httpapi.Idempotent for POST /graphql (DESIGN §7): an
// Idempotency-Key applies to an operation of exactly one mutation field,
// the request being its query, operation name and variables. A query or
// subscription runs as if the header were absent (it changes nothing, and
// a retry of it is safe already); a mutation of several fields is refused
// with VALIDATION_ERROR on Idempotency-Key, since one key cannot name
// several changes (and a WebSocket upgrade refuses the key: noKeyOnSockets).
// Whether the change succeeded is read from the executed response
// (recordOutcome), whatever the framing the client asked for: a response
// with errors, or none, rolls the change back and is not recorded, and the
// key is free again. A replay is the recorded response in the framing the retry asks
// for (JSON or an event stream), and spends replayPoints of the rate limit.
func Idempotency(svc *service.Service) gin.HandlerFunc {
	return httpapi.Idempotent(svc, httpapi.IdempotencyScope{
		Fingerprint: mutationFingerprint,
		Track:       trackOutcome,
		Replay:      chargeReplay,
		Render:      renderReplay,
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
// mutation's one response with data and no errors, and its JSON (as the
// POST transport writes it) is what a retry replays.
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
		var b bytes.Buffer
		writeResponse(&b, resp)
		o.record = b.Bytes()
	}
	return resp
}

// renderReplay implements httpapi.IdempotencyScope.Render: the recorded
// response as JSON in the media type the retry accepts, or, to a retry
// that asks for an event stream, as the stream the SSE transport sends
// for a mutation (one next event, then complete).
func renderReplay(c *gin.Context, status int, record []byte) {
	accept := c.GetHeader("Accept")
	if !strings.Contains(accept, "text/event-stream") {
		c.Header("Content-Type", responseMediaType(accept))
		c.Writer.WriteHeader(status)
		_, _ = c.Writer.Write(record)
		return
	}
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Writer.WriteHeader(status)
	_, _ = fmt.Fprintf(c.Writer, ":\n\nevent: next\ndata: %s\n\nevent: complete\n\n", record)
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
	if op == nil || op.Operation != ast.Mutation {
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

// chargeReplay spends a replay's points of the caller's budget, as gqlgen's
// cost extension would have for the operation, and refuses it past the
// limit like any request.
func chargeReplay(c *gin.Context) error {
	a := accountFrom(c.Request.Context())
	if a == nil {
		return nil
	}
	d := a.charge(c.Request.Context(), replayPoints)
	if !d.Allowed {
		return apperr.RateLimited("too many requests for this API key", d.Window, d.Limit, d.RetryAfter)
	}
	return nil
}
