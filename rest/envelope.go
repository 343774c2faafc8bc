package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// meta is carried by every response.
type meta struct {
	Timestamp string `json:"timestamp"`
	RequestID string `json:"request_id"`
	// Pagination is a *pagination, or the cursor-only eventsPagination.
	Pagination any `json:"pagination,omitempty"`
}

type pagination struct {
	// Page is absent on a page reached by cursor, whose number is not
	// known without counting everything before it.
	Page  int `json:"page,omitzero"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
	// NextCursor is given by lists that take a cursor (items), and there
	// always: null on the last page. Other lists leave it out.
	NextCursor nextCursor `json:"next_cursor,omitzero"`
}

// nextCursor is the next_cursor of a list that offers cursors: a string, or
// null when no page follows. Its zero value is a list without cursors.
type nextCursor struct {
	offered bool
	value   string // "" on the last page
}

// IsZero reports a list without cursors, whose next_cursor is left out.
func (n nextCursor) IsZero() bool { return !n.offered }

// MarshalJSON writes the cursor, or null on the last page.
func (n nextCursor) MarshalJSON() ([]byte, error) {
	if n.value == "" {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

type success struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
	Meta    meta `json:"meta"`
}

type failure struct {
	Success bool      `json:"success"`
	Error   errorBody `json:"error"`
	Meta    meta      `json:"meta"`
}

type errorBody struct {
	Code    apperr.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func newMeta(c *gin.Context) meta {
	return meta{
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		RequestID: c.GetString(requestIDKey),
	}
}

// renderData writes the success envelope around data.
func renderData(c *gin.Context, status int, data any) {
	writeJSON(c, status, success{Success: true, Data: data, Meta: newMeta(c)})
}

// renderPage writes the success envelope of a list, with its pagination.
func renderPage(c *gin.Context, data any, p pagination) {
	m := newMeta(c)
	m.Pagination = &p
	writeJSON(c, http.StatusOK, success{Success: true, Data: data, Meta: m})
}

// unavailableRetryAfter is the Retry-After of a 503, in seconds: long enough
// for a restarted database or a freed disk, short enough not to idle.
const unavailableRetryAfter = "5"

// renderError writes the failure envelope of any error. Errors the client did
// not cause are logged with their cause, which never reaches the response.
func renderError(c *gin.Context, err error) {
	e := apperr.FromRequest(c.Request.Context(), err)
	if e.Code == apperr.CodeInternal || e.Code == apperr.CodeUnavailable {
		logger(c).ErrorContext(c.Request.Context(), "request failed", "code", e.Code, "err", err)
	}
	switch e.Code {
	case apperr.CodeRateLimited:
		setRefusalHeaders(c, e)
	case apperr.CodeUnavailable:
		c.Header(headerRetryAfter, unavailableRetryAfter)
	case apperr.CodeIdempotencyKeyInUse:
		c.Header(headerRetryAfter, strconv.Itoa(service.IdempotencyRetryAfter))
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	_ = c.Error(err) // for the access log
	if c.GetBool(graphqlErrorsKey) {
		renderGraphQLError(c, e)
		return
	}
	writeJSON(c, e.Status(), failure{
		Error: errorBody{Code: e.Code, Message: e.Message, Details: details},
		Meta:  newMeta(c),
	})
}

// bufferPool holds encoding buffers across requests: json.Marshal would
// grow a fresh buffer and then copy the body out of it on every response.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps an occasional huge response from pinning memory.
const maxPooledBuffer = 64 << 10

func writeJSON(c *gin.Context, status int, v any) {
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
		logger(c).ErrorContext(c.Request.Context(), "encode response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(buf).Encode(failure{
			Error: errorBody{Code: apperr.CodeInternal, Message: "internal error", Details: map[string]any{}},
			Meta:  newMeta(c),
		})
	}
	// Encode ends the value with a newline that Marshal does not write.
	c.Data(status, "application/json; charset=utf-8", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	c.Abort()
}

// logger is the request's logger, carrying its request id (made on demand:
// only failures and panics need it).
func logger(c *gin.Context) *slog.Logger {
	return baseLogger(c).With("request_id", c.GetString(requestIDKey))
}

// baseLogger is the router's logger, without request attributes.
func baseLogger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(loggerKey); ok {
		if l, ok := l.(*slog.Logger); ok {
			return l
		}
	}
	return slog.Default()
}

// errorOf returns the first error rendered for the request, for the access log.
func errorOf(c *gin.Context) error {
	if len(c.Errors) == 0 {
		return nil
	}
	return errors.Unwrap(c.Errors[0]) // gin wraps it
}
