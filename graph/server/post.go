package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/graph/serial"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
)

// postTransport is gqlgen's POST transport (transport.POST, same requests,
// statuses and content negotiation) with one difference: it writes the
// response's data as the executor rendered it. gqlgen's own writes the
// response with json.Marshal, which re-reads and copies the whole data
// (a json.RawMessage is compacted and validated on the way out): for a page
// of items that was a sixth of the request's CPU.
type postTransport struct {
	// pooled: the executor writes the response's data into a buffer of
	// serial's pool (the rewritten executor, fastPaths), which Do gives
	// back once written. gqlgen's own executor's data is left alone.
	pooled bool
}

var _ graphql.Transport = postTransport{}

const (
	mediaJSON            = httpapi.MediaJSON
	mediaGraphQLResponse = httpapi.MediaGraphQLResponse
)

// Supports implements graphql.Transport.
func (postTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mt == mediaJSON
}

// Do implements graphql.Transport.
func (t postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	contentType := responseMediaType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	body, err := bodyBytes(r)
	if err != nil {
		writeRefusal(w, apperr.Validation("body", "could not be read"))
		return
	}
	params, refused := decodeParams(body)
	if refused != nil {
		writeRefusal(w, refused)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(r.Context(), w, exec, params, contentType, t.pooled)
}

// execute runs a GraphQL-over-HTTP request (GET's or POST's) and answers it
// by the specification's status rules
// (https://graphql.github.io/graphql-over-http/): a request that is not
// one (no query) is 400; a document that does not parse or validate, or
// variables that do not coerce, fail before execution, and answer 200 to a
// client that accepts application/json (its errors are the response's to
// carry), or 400 with no data entry under
// application/graphql-response+json (whose status says it). A refusal
// that has a status of its own on REST (401, 405, 429, 503) keeps it
// either way (account.status, statusOverride). The errors carry the
// contract's codes, as any other.
func execute(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, params *graphql.RawParams, contentType string, pooled bool) {
	if strings.TrimSpace(params.Query) == "" {
		writeRefusal(w, apperr.Validation("query", "is required: the GraphQL document to run"))
		return
	}
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		if contentType == mediaGraphQLResponse {
			w.WriteHeader(http.StatusBadRequest)
			writeRequestError(w, resp)
			return
		}
		w.WriteHeader(http.StatusOK)
		writeResponse(w, resp)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if resp == nil {
		// A subscription over plain POST answers its first event; its
		// stream ended first (the client left, the server shut down).
		if ctx.Err() != nil {
			return // nobody to answer
		}
		resp = &graphql.Response{Data: json.RawMessage("null")}
	}
	writeResponse(w, resp)
	if pooled {
		// The executor wrote the data into a buffer of serial's pool
		// (graph/internal/gqlrewrite); nothing reads it after this.
		serial.Release(resp.Data)
	}
}

// requestError is the response to a request error (one that failed before
// execution) under application/graphql-response+json: without a data entry,
// which the specification reserves for an operation that ran.
type requestError struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// writeRequestError writes resp as a requestError.
func writeRequestError(w io.Writer, resp *graphql.Response) {
	b, err := json.Marshal(requestError{Errors: resp.Errors, Extensions: resp.Extensions})
	if err != nil {
		panic(fmt.Errorf("marshal the response: %w", err))
	}
	_, _ = w.Write(b)
}

// responseMediaType is the response media type of a request by its Accept
// header (httpapi.GraphQLMediaType, which the refusals of the shared
// middleware answer in too).
func responseMediaType(accept string) string { return httpapi.GraphQLMediaType(accept) }

// writeResponse writes resp as json.Marshal would, in the same member
// order, but with the data copied as it is: the executor wrote it as JSON.
// (json.Marshal would also rewrite <, > and & inside its strings as \u003c
// and the like: the same JSON text.)
// A response of an incremental delivery (label, path, hasNext), which this
// server does not offer, takes json.Marshal's way.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		b, err := json.Marshal(resp)
		if err != nil {
			panic(fmt.Errorf("marshal the response: %w", err))
		}
		_, _ = w.Write(b)
		return
	}
	// The whole response is written in one call, from a buffer of the
	// pool the executor's data comes from.
	buf := serial.Buffer()
	defer func() { serial.Release(buf.Bytes()) }()
	enc := json.NewEncoder(buf)
	buf.WriteByte('{')
	if len(resp.Errors) > 0 {
		buf.WriteString(`"errors":`)
		mustEncode(enc, buf, resp.Errors)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	if len(resp.Data) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(resp.Data)
	}
	if len(resp.Extensions) > 0 {
		buf.WriteString(`,"extensions":`)
		writeExtensions(enc, buf, resp.Extensions)
	}
	buf.WriteByte('}')
	if hw, ok := w.(http.ResponseWriter); ok {
		// Declared, so that net/http sends the body as it is rather than
		// in chunks (one more write on the connection for each response).
		hw.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	}
	_, _ = w.Write(buf.Bytes())
}

// writeExtensions appends ext's JSON to buf; the usual extensions, the
// cost alone, without a trip through reflection and a sorted map.
func writeExtensions(enc *json.Encoder, buf *bytes.Buffer, ext map[string]any) {
	if c, ok := ext[costStatsKey].(costExtension); ok && len(ext) == 1 {
		b := append(buf.AvailableBuffer(), `{"`+costStatsKey+`":`...)
		if b, ok := c.appendJSON(b); ok {
			buf.Write(append(b, '}'))
			return
		}
	}
	mustEncode(enc, buf, ext)
}

// mustEncode appends v's JSON to buf, without the newline Encode ends
// with. The values are the executor's own errors and extensions, which
// always encode.
func mustEncode(enc *json.Encoder, buf *bytes.Buffer, v any) {
	if err := enc.Encode(v); err != nil {
		panic(fmt.Errorf("marshal the response: %w", err))
	}
	buf.Truncate(buf.Len() - 1)
}
