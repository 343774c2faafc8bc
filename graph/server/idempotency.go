package server

import (
	"bytes"
	"encoding/json"
	"net/http"

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
// several changes. A response with errors is not recorded: its change did
// not happen (the transaction rolled back), and the key is free again. A
// replay spends replayPoints of the rate limit.
func Idempotency(svc *service.Service) gin.HandlerFunc {
	return httpapi.Idempotent(svc, httpapi.IdempotencyScope{
		Fingerprint: mutationFingerprint,
		Failed:      hasErrors,
		Replay:      chargeReplay,
		ContentType: func(c *gin.Context) string { return responseMediaType(c.GetHeader("Accept")) },
	})
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

// hasErrors reports a GraphQL response with errors.
func hasErrors(body []byte) bool {
	var r struct {
		Errors []json.RawMessage `json:"errors"`
	}
	return json.Unmarshal(body, &r) != nil || len(r.Errors) > 0
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
