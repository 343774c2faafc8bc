package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
)

// Headers of safe retries (DESIGN §7).
const (
	// HeaderIdempotencyKey names a request a client may send again.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderIdempotentReplayed marks a response replayed from the record
	// of the first request with the key.
	HeaderIdempotentReplayed = "Idempotent-Replayed"
)

// IdempotencyScope says how a route's requests are told apart, and how
// its outcome is read and replayed.
type IdempotencyScope struct {
	// Fingerprint identifies the request whose body is body (already
	// read); apply false runs the request as if it had no key (a GraphQL
	// query). An error refuses the request.
	Fingerprint func(c *gin.Context, body []byte) (fingerprint string, apply bool, err error)
	// Track, when set, decides the outcome from what the handler executed,
	// never from the bytes it framed (JSON, an event stream): it returns
	// the context to run the handler under, and a function that, once the
	// handler has returned, says whether its change succeeded and what to
	// record for a retry. Anything but a success it saw rolls the change
	// back. nil: REST's rule, a status below 400 succeeded and its JSON
	// body is the record.
	Track func(ctx context.Context) (context.Context, func() (record []byte, ok bool))
	// Replay, when set, serves a recorded response once the service has
	// let the caller have it: GraphQL runs the request on through its
	// executor, which prices, charges and checks the operation as it did
	// the first time, and answers the record in place of running it. nil:
	// REST's, the recorded JSON (its route's middleware, before this,
	// authenticated, charged and checked the request as any other).
	Replay func(c *gin.Context, resp service.IdempotentResponse)
	// DropSecrets is service.IdempotentRequest's: REST leaves a secret's
	// member out of the record, GraphQL records null.
	DropSecrets bool
}

// Idempotent makes a route safe to retry with an Idempotency-Key header
// (service.Idempotent): the first request with a key runs, and its
// successful response is recorded in the transaction of its change; a
// retry with the same key and request gets that response again, marked
// Idempotent-Replayed: true, and changes nothing; the same key with another
// request is 422 IDEMPOTENCY_KEY_REUSED; a retry while the first still
// runs is 409 IDEMPOTENCY_KEY_IN_USE with Retry-After. A request without
// the header, or without a viewer (nothing to scope the key to), runs as
// it always did. It goes after authentication and the rate limit (and on
// REST the scope check; GraphQL's executor checks a replay itself:
// IdempotencyScope.Replay), so that a replay passes them as the viewer is
// now, like any request; the service refuses it to a weaker caller than
// the first (service.Idempotent).
func Idempotent(svc *service.Service, scope IdempotencyScope) gin.HandlerFunc {
	return func(c *gin.Context) {
		keys := c.Request.Header.Values(HeaderIdempotencyKey)
		if _, ok := viewer.FromContext(c.Request.Context()); len(keys) == 0 || !ok {
			c.Next()
			return
		}
		// HTTP drops the spaces around a value; a key of spaces only
		// is an empty one.
		key := strings.TrimSpace(keys[0])
		if err := service.CheckIdempotencyKey(key); err != nil {
			Fail(c, err)
			return
		}
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				Fail(c, apperr.New(apperr.CodePayloadTooLarge, fmt.Sprintf("the request body exceeds %d bytes", MaxBodyBytes)))
				return
			}
			Fail(c, apperr.Validation("body", "could not be read"))
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		fingerprint, apply, err := scope.Fingerprint(c, body)
		if err != nil {
			Fail(c, err)
			return
		}
		if !apply {
			c.Next()
			return
		}
		out := c.Writer
		req := service.IdempotentRequest{Key: key, Fingerprint: fingerprint, DropSecrets: scope.DropSecrets}
		var sent *bufferedWriter
		resp, replayed, err := svc.Idempotent(c.Request.Context(), req, func(ctx context.Context) (service.IdempotentResponse, error) {
			var resp service.IdempotentResponse
			resp, sent = runBuffered(ctx, c, scope.Track)
			return resp, nil
		})
		c.Writer = out
		if err != nil {
			out.Header().Del("Location")
			out.Header().Del("ETag")
			Fail(c, err)
			return
		}
		if !replayed {
			// The first request: its change committed (a success) or
			// rolled back (the response says why); either way the bytes
			// its handler framed are the answer, and none left earlier.
			out.WriteHeader(sent.status)
			_, _ = out.Write(sent.body.Bytes())
			c.Abort()
			return
		}
		if scope.Replay != nil {
			scope.Replay(c, resp)
			c.Abort()
			return
		}
		c.Header(HeaderIdempotentReplayed, "true")
		if resp.Location != "" {
			c.Header("Location", resp.Location)
		}
		if resp.ETag != "" {
			c.Header("ETag", resp.ETag)
		}
		c.Header("Content-Type", "application/json; charset=utf-8")
		out.WriteHeader(resp.Status)
		_, _ = out.Write(resp.Body)
		c.Abort()
	}
}

// runBuffered runs the rest of the chain under ctx, holding its response
// back until the change it made and its record have committed or rolled
// back. It returns the outcome to record (track's, when set) and the
// buffered response.
func runBuffered(ctx context.Context, c *gin.Context, track func(context.Context) (context.Context, func() ([]byte, bool))) (service.IdempotentResponse, *bufferedWriter) {
	var outcome func() ([]byte, bool)
	if track != nil {
		ctx, outcome = track(ctx)
	}
	out, req := c.Writer, c.Request
	buf := &bufferedWriter{ResponseWriter: out, status: http.StatusOK}
	c.Writer, c.Request = buf, req.WithContext(ctx)
	defer func() { c.Writer, c.Request = out, req }()
	c.Next()
	resp := service.IdempotentResponse{Status: buf.status, Body: bytes.Clone(buf.body.Bytes()), Location: out.Header().Get("Location"), ETag: out.Header().Get("ETag")}
	if outcome != nil {
		record, ok := outcome()
		resp.Body, resp.Failed = record, !ok
	}
	return resp, buf
}

// CanonicalJSON is body as compact JSON with sorted object keys, or body
// itself when it is not JSON (the handler refuses it, and nothing is kept).
func CanonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// bufferedWriter keeps a response in memory instead of sending it. It is
// written from the request's goroutine only: the one transport that writes
// from a goroutine of its own, GraphQL's event stream (its keep-alive),
// serializes those writes and drops any after the handler has returned
// (graph/server's sseTransport).
type bufferedWriter struct {
	gin.ResponseWriter
	status  int
	written bool
	body    bytes.Buffer
}

// WriteHeader implements http.ResponseWriter.
func (w *bufferedWriter) WriteHeader(code int) {
	if !w.written {
		w.status = code
	}
}

// WriteHeaderNow implements gin.ResponseWriter.
func (w *bufferedWriter) WriteHeaderNow() { w.written = true }

// Write implements http.ResponseWriter.
func (w *bufferedWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.body.Write(b)
}

// WriteString implements gin.ResponseWriter.
func (w *bufferedWriter) WriteString(s string) (int, error) {
	w.written = true
	return w.body.WriteString(s)
}

// Status implements gin.ResponseWriter.
func (w *bufferedWriter) Status() int { return w.status }

// Size implements gin.ResponseWriter.
func (w *bufferedWriter) Size() int {
	if !w.written {
		return -1
	}
	return w.body.Len()
}

// Written implements gin.ResponseWriter.
func (w *bufferedWriter) Written() bool { return w.written }

// Flush implements http.Flusher: nothing leaves before the commit.
func (w *bufferedWriter) Flush() {}
