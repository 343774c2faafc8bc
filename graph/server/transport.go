package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
)

// gqlgen's transports answer a few requests themselves, with an error that
// has no extensions.code (a mutation over GET: 406; variables that are not
// JSON: 400; a POST that is not JSON: 400 "transport not supported"). This
// file answers those with the contract's codes instead, before gqlgen, or,
// for the mutation over GET, from inside it once the operation is known.

// getTransport is gqlgen's GET transport, with its own refusals checked
// first and with a mutation refused by queriesOverGET. pooled: the
// executor writes into serial's buffers (postTransport.pooled).
type getTransport struct {
	transport.GET
	pooled bool
}

// overGETKey marks the context of a GET request for queriesOverGET; its
// value is the response writer whose status a refusal sets.
type overGETKey struct{}

// Do implements graphql.Transport: gqlgen's GET, with the refusals coded
// and the statuses of execute.
func (t getTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	contentType := responseMediaType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeRefusal(w, apperr.Validation("query", "the query string does not parse: "+err.Error()))
		return
	}
	params := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName"), Headers: r.Header}
	for _, p := range []struct {
		name string
		into *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		if v := q.Get(p.name); v != "" {
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			if dec.Decode(p.into) != nil {
				writeRefusal(w, apperr.Validation(p.name, "must be a JSON object"))
				return
			}
		}
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	sw := &statusOverride{ResponseWriter: w}
	execute(context.WithValue(r.Context(), overGETKey{}, sw), sw, exec, params, contentType, t.pooled)
}

// statusOverride writes status instead of the one gqlgen chooses, once set.
type statusOverride struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter.
func (w *statusOverride) WriteHeader(code int) {
	if w.status != 0 {
		code = w.status
	}
	w.ResponseWriter.WriteHeader(code)
}

// writeRefusal answers err GraphQL-shaped with its HTTP status, in the
// media type a transport chose already (else application/json); under
// application/graphql-response+json without a data entry, as every
// request error there.
func writeRefusal(w http.ResponseWriter, e *apperr.Error) {
	ext := map[string]any{"code": e.Code}
	for k, v := range e.Details {
		ext[k] = v
	}
	errs := gqlerror.List{{Message: e.Message, Extensions: ext}}
	var b []byte
	switch w.Header().Get("Content-Type") {
	case "":
		w.Header().Set("Content-Type", mediaJSON)
		fallthrough
	case mediaJSON:
		b, _ = json.Marshal(graphql.Response{Errors: errs})
	default:
		b, _ = json.Marshal(requestError{Errors: errs})
	}
	w.WriteHeader(e.Status())
	_, _ = w.Write(b)
}

// sseTransport is gqlgen's Server-Sent Events transport with the body
// checked first: a body that is not a GraphQL request is refused with 400
// VALIDATION_ERROR here, where gqlgen's would write it, raw, whole, to the
// standard logger (log.Printf) and echo it in the response. What it passes
// on decodes.
type sseTransport struct{ transport.SSE }

// Do implements graphql.Transport.
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, err := bodyBytes(r)
	if err != nil {
		writeRefusal(w, apperr.Validation("body", "could not be read"))
		return
	}
	if _, refused := decodeParams(body); refused != nil {
		writeRefusal(w, refused)
		return
	}
	r.Body = readBody{Reader: bytes.NewReader(body), data: body}
	// gqlgen's keep-alive goroutine stops when the request's context ends,
	// which net/http does only after Do returns, and a tick that comes
	// between would write to a response net/http has already finished (a
	// panic, which no recovery catches on that goroutine: the process
	// ends). So the context ends with Do, and the writer drops whatever
	// comes after.
	ctx, cancel := context.WithCancel(r.Context())
	sw := &sealedWriter{ResponseWriter: w}
	defer func() {
		cancel()
		sw.seal()
	}()
	t.SSE.Do(sw, r.WithContext(ctx), exec)
}

// sealedWriter passes writes and flushes to the response until seal, and
// drops them after.
type sealedWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	sealed bool
}

// Write implements http.ResponseWriter.
func (s *sealedWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed {
		return 0, http.ErrHandlerTimeout
	}
	return s.ResponseWriter.Write(b)
}

// WriteHeader implements http.ResponseWriter.
func (s *sealedWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sealed {
		s.ResponseWriter.WriteHeader(code)
	}
}

// Flush implements http.Flusher.
func (s *sealedWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.ResponseWriter.(http.Flusher); ok && !s.sealed {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the response underneath.
func (s *sealedWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// seal makes every later write and flush a no-op; one under way finishes
// first.
func (s *sealedWriter) seal() {
	s.mu.Lock()
	s.sealed = true
	s.mu.Unlock()
}

// decodeParams reads a POST body as a GraphQL request, or says why it is
// not one. The reason names what is wrong, never the body's text: a body
// is the client's to know, not the response's or the log's to repeat.
func decodeParams(body []byte) (*graphql.RawParams, *apperr.Error) {
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		reason := "is not JSON"
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return nil, apperr.Validation(typeErr.Field, "must not be a JSON "+typeErr.Value)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			reason = "is empty: send {\"query\": …}"
		} else if errors.As(err, &typeErr) {
			reason = "must be a JSON object {\"query\", \"variables\"?, \"operationName\"?, \"extensions\"?}"
		}
		return nil, apperr.Validation("body", reason)
	}
	// encoding/json keeps the last of repeated names: refused instead, as
	// on REST, naming the path (variables.input.name).
	if name, dup := httpapi.DuplicateKey(body); dup {
		return nil, apperr.Validation(name, "appears more than once in the body: send each field once")
	}
	return params, nil
}

// queriesOverGET refuses an operation other than a query over GET with
// 405 METHOD_NOT_ALLOWED and Allow: POST, before it is priced or charged:
// GET must stay safe to repeat and to prefetch.
type queriesOverGET struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = queriesOverGET{}

// ExtensionName implements graphql.HandlerExtension.
func (queriesOverGET) ExtensionName() string { return "QueriesOverGET" }

// Validate implements graphql.HandlerExtension.
func (queriesOverGET) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (queriesOverGET) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	sw, ok := ctx.Value(overGETKey{}).(*statusOverride)
	if !ok || opCtx.Operation == nil || opCtx.Operation.Operation == ast.Query {
		return nil
	}
	sw.Header().Set("Allow", http.MethodPost)
	sw.status = http.StatusMethodNotAllowed
	return refusal(apperr.New(apperr.CodeMethodNotAllowed,
		string(opCtx.Operation.Operation)+" operations must be sent with POST; GET serves queries only"))
}

// jsonBody lets a POST without a Content-Type, or with a +json one, through
// to gqlgen as the JSON REST takes it for, and refuses any other media type
// with 415 UNSUPPORTED_MEDIA_TYPE, as /v1 does. It reads the body (gqlgen
// reads it whole too), so that one over the limit without a declared length
// is 413 PAYLOAD_TOO_LARGE here rather than an unreadable body in gqlgen.
func jsonBody(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		return
	}
	ct := c.GetHeader("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case ct == "" || (err == nil && strings.HasSuffix(mt, "+json")):
		c.Request.Header.Set("Content-Type", "application/json")
	case err != nil || mt != "application/json":
		httpapi.Fail(c, apperr.New(apperr.CodeUnsupportedMedia, "the request body must be application/json"))
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		httpapi.Fail(c, apperr.New(apperr.CodePayloadTooLarge, fmt.Sprintf("the request body exceeds %d bytes", tooLarge.Limit)))
		return
	case err != nil:
		httpapi.Fail(c, apperr.Validation("body", "could not be read: "+err.Error()))
		return
	}
	c.Request.Body = readBody{Reader: bytes.NewReader(body), data: body}
}

// readBody is a request body jsonBody has read whole: the POST transport
// takes its bytes rather than copying them again.
type readBody struct {
	*bytes.Reader
	data []byte
}

// Close implements io.Closer.
func (readBody) Close() error { return nil }

// bodyBytes reads r's body whole, or takes the bytes jsonBody read.
func bodyBytes(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(readBody); ok {
		return b.data, nil
	}
	return io.ReadAll(r.Body)
}

// unsupported is the last transport: it answers any request the others do
// not take (a GET asking to upgrade the connection) with 400
// VALIDATION_ERROR, where gqlgen would answer "transport not supported"
// without a code. A transport added after it is never reached.
type unsupported struct{}

// Supports implements graphql.Transport.
func (unsupported) Supports(*http.Request) bool { return true }

// Do implements graphql.Transport.
func (unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	writeRefusal(w, apperr.Validation("request", "/graphql takes a query over GET or a JSON body over POST; "+r.Method+" with these headers is neither"))
}

// methodNotAllowed answers a method /graphql does not serve with 405
// METHOD_NOT_ALLOWED, GraphQL-shaped, and the Allow header.
func methodNotAllowed(c *gin.Context) {
	c.Header("Allow", "GET, POST")
	httpapi.Fail(c, apperr.New(apperr.CodeMethodNotAllowed, "/graphql takes GET (queries) and POST; see the Allow header"))
}
