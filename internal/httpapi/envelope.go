// Package httpapi holds what the two HTTP transports, REST (/v1) and GraphQL
// (/graphql), share rather than import from each other: the response
// envelope and the rendering of a failure (as the envelope, or GraphQL-shaped
// on /graphql), the request's id and logger, the bearer token, the client
// address, the body limit and the rate-limit headers. It knows the contract's
// error codes (internal/apperr), not the resources either transport serves.
package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
)

// Meta is carried by every response.
type Meta struct {
	Timestamp string `json:"timestamp"`
	RequestID string `json:"request_id"`
	// Pagination is set by lists, in the shape their transport gives it.
	Pagination any `json:"pagination,omitempty"`
}

// Failure is the envelope of an error.
type Failure struct {
	Success bool      `json:"success"`
	Error   ErrorBody `json:"error"`
	Meta    Meta      `json:"meta"`
}

// ErrorBody is the error of a Failure; the event stream sends it alone.
type ErrorBody struct {
	Code    apperr.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// NewMeta is the meta of a response to c.
func NewMeta(c *gin.Context) Meta {
	return Meta{
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		RequestID: c.GetString(RequestIDKey),
	}
}

// bufferPool holds encoding buffers across requests: json.Marshal would
// grow a fresh buffer and then copy the body out of it on every response.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps an occasional huge response from pinning memory.
const maxPooledBuffer = 64 << 10

// WriteJSON writes v as the response with status and ends the request.
func WriteJSON(c *gin.Context, status int, v any) {
	buf := bufferPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			bufferPool.Put(buf)
		}
	}()
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		// Only a programming error gets here; answer without the failed value.
		Logger(c).ErrorContext(c.Request.Context(), "encode response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(buf).Encode(Failure{
			Error: ErrorBody{Code: apperr.CodeInternal, Message: "internal error", Details: map[string]any{}},
			Meta:  NewMeta(c),
		})
	}
	// Encode ends the value with a newline that Marshal does not write.
	c.Data(status, "application/json; charset=utf-8", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	c.Abort()
}
