package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/viewer"
)

// Context keys set by the middleware.
const (
	requestIDKey = httpapi.RequestIDKey
	loggerKey    = httpapi.LoggerKey
)

// RequestIDHeader carries the request id both ways.
const RequestIDHeader = "X-Request-ID"

// requestID accepts a caller's request id if it is sane, or makes one, and
// echoes it in the response header, meta.request_id and every log line. It
// keeps the base logger rather than a logger With the id: that costs a
// handler clone per request, and only failures log more than the access line.
func requestID(base *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(RequestIDHeader)
		if !validRequestID(id) {
			id = strings.ToLower(ulid.Make().String())
		}
		c.Set(requestIDKey, id)
		c.Set(loggerKey, base)
		c.Header(RequestIDHeader, id)
		c.Next()
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// recovery turns a panic into a 500 envelope; the panic goes to the log only.
func recovery(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			logger(c).ErrorContext(c.Request.Context(), "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !c.Writer.Written() {
				renderError(c, apperr.Internal(fmt.Errorf("panic: %v", p)))
			}
		}
	}()
	c.Next()
}

// accessLog writes one line per request: never a token, key or body. Typed
// attributes (LogAttrs) spare boxing each value on the hot path.
func accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	ctx := c.Request.Context()
	base := baseLogger(c)
	if !base.Enabled(ctx, slog.LevelInfo) {
		return
	}
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs,
		slog.String("request_id", c.GetString(requestIDKey)),
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.Int("bytes", c.Writer.Size()),
	)
	if v, ok := viewer.FromContext(ctx); ok {
		attrs = append(attrs, slog.String("user_id", v.UserID), slog.String("key_id", v.KeyID))
	}
	if err := errorOf(c); err != nil && c.Writer.Status() >= 500 {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	level := slog.LevelInfo
	if isProbe(route) && c.Writer.Status() < 400 {
		level = slog.LevelDebug // a healthy probe every few seconds is noise
	}
	base.LogAttrs(ctx, level, "request", attrs...)
}

// securityHeaders suit a JSON API: nothing is sniffed, framed or cached, a
// response opened as a page may run nothing, and a browser that reached us
// over TLS keeps to it (HSTS only then: over plain HTTP, behind a proxy, the
// proxy that terminates TLS sends it). The HTML pages (web) replace the
// policy and the caching with their own; everything else, their 404s
// included, keeps these.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	if c.Request.TLS != nil {
		h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
	}
	c.Next()
}

// deadline gives every request a context that ends after d, so that no
// request holds a database connection longer: the driver cancels the query,
// and the error renders as UNAVAILABLE with reason "timeout"
// (apperr.FromRequest). The connection of a stream is spared (it must
// outlive d); what runs over it keeps a deadline of its own: each database
// read of an event stream (internal/events), each GraphQL query and mutation
// (graph's operation deadline).
func deadline(d time.Duration, streams []string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if d <= 0 || streaming(c, streams) {
			c.Next()
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// streaming reports a request that opens a long-lived stream: the REST event
// stream, or, on a route of streams (GraphQL), a WebSocket upgrade or a POST
// asking for Server-Sent Events, the two requests a stream can be opened
// with. A GET asking for events opens none (GraphQL serves SSE over POST
// only): it keeps its deadline, as a header alone must never lift it.
func streaming(c *gin.Context, streams []string) bool {
	route := c.FullPath()
	if route == EventStreamPath {
		return true
	}
	if !slices.Contains(streams, route) {
		return false
	}
	h := c.Request.Header
	return c.Request.Method == http.MethodGet && strings.EqualFold(h.Get("Upgrade"), "websocket") ||
		c.Request.Method == http.MethodPost && strings.Contains(h.Get("Accept"), "text/event-stream")
}
