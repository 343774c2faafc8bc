// Package rest is the JSON REST API under /v1: gin handlers that decode a
// request, call the service layer and render the envelope of DESIGN §3.
package rest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
)

// Options wire optional parts of the router; the zero value serves the API
// with no rate limits.
type Options struct {
	Logger *slog.Logger
	// RateLimit runs after authentication on every authenticated route.
	RateLimit gin.HandlerFunc
	// RequestTimeout bounds the work of every request (REQUEST_TIMEOUT):
	// its context, and so its database queries, end then. Zero is none.
	RequestTimeout time.Duration
	// StreamRoutes are mounted routes that may open streams (GraphQL
	// subscriptions over WebSocket or SSE): those requests are exempt from
	// RequestTimeout, as GET /v1/events/stream is.
	StreamRoutes []string
	// Streams, when set, takes over the connections of the HTTP/1.1 event
	// streams (GET /v1/events/stream), which the server's Shutdown then
	// does not wait for: its owner calls Streams.Shutdown after it. Nil
	// leaves them to net/http.
	Streams *Streams
	// Mount adds routes beside /v1 (GraphQL, health, metrics) on the same
	// engine and middleware.
	Mount func(e *gin.Engine, authenticated ...gin.HandlerFunc)
	// TrustedProxies are the addresses or CIDRs whose X-Forwarded-For and
	// X-Real-IP are believed when finding a client's address (failed-login
	// limits); empty trusts none, so a client cannot pick its own address.
	TrustedProxies []string

	// Operations (ops.go, cors.go, metrics.go).

	// Metrics, when set, counts and times every request and is served at
	// /metrics with every metric of the set.
	Metrics *metrics.Set
	// Ready reports whether the server can answer (its database does), for
	// /readyz; nil means always ready.
	Ready func(ctx context.Context) error
	// CORSOrigins are the origins browser apps may call from; "*" is any.
	CORSOrigins []string
	// Sandbox marks every response with X-Environment: sandbox.
	Sandbox bool
	// Tracing, when set, runs first on every request (a span per request,
	// around everything the request logs); nil: tracing is off.
	Tracing gin.HandlerFunc
}

// NewRouter returns the HTTP handler of the whole API. The middleware order
// stands here and nowhere else.
func NewRouter(svc *service.Service, opts Options) *gin.Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	if err := e.SetTrustedProxies(opts.TrustedProxies); err != nil {
		// config validates TRUSTED_PROXIES; should a bad one get here,
		// trusting nobody is the safe way to go on.
		opts.Logger.Error("invalid trusted proxies; trusting none", "err", err)
		_ = e.SetTrustedProxies(nil)
	}

	e.Use(presizeStack(opts.StreamRoutes)) // first: grows the stack while it is shallow
	if opts.Tracing != nil {
		e.Use(opts.Tracing) // before the log lines, which then carry its trace id
	}
	e.Use(
		requestID(opts.Logger), // everything after logs with it
		observe(opts.Metrics),  // before recovery: a panic counts as the 500 it becomes
		accessLog,
		recovery,
		securityHeaders,
		cors(opts.CORSOrigins), // before routing, which would refuse a preflight OPTIONS
		environment(opts.Sandbox),
		deadline(opts.RequestTimeout, opts.StreamRoutes),
	)
	e.NoRoute(func(c *gin.Context) {
		renderError(c, apperr.NotFound("route"))
	})
	e.NoMethod(func(c *gin.Context) {
		renderError(c, apperr.New(apperr.CodeMethodNotAllowed, "method not allowed on this route; see the Allow header"))
	})

	authenticated := []gin.HandlerFunc{Authenticate(svc)}
	if opts.RateLimit != nil {
		authenticated = append(authenticated, opts.RateLimit)
	}

	v1 := e.Group("/v1", httpapi.LimitBody, requireJSONBody)
	v1.POST("/auth/login", httpapi.ClientAddr, login(svc))

	api := v1.Group("", append(authenticated, writeScope)...)
	bindUsers(api, svc)
	bindItems(api, svc)
	bindWebhooks(api, svc)
	bindKeys(api, svc)
	bindAudit(api, svc)
	bindBackups(api, svc)
	bindEvents(v1, svc, opts.Streams, append(authenticated, writeScope))

	bindOps(e, opts)
	if opts.Mount != nil {
		opts.Mount(e, authenticated...)
	}
	return e
}

// writeScope refuses a write (any method but GET, HEAD and OPTIONS) by a
// read-only key, after authentication and the rate limit, before the route's
// handler reads its body.
func writeScope(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := service.RequireWrite(c.Request.Context()); err != nil {
			renderError(c, err)
			return
		}
	}
	c.Next()
}

// requireJSONBody applies requireJSON to the methods that carry a body.
func requireJSONBody(c *gin.Context) {
	switch c.Request.Method {
	case "POST", "PUT", "PATCH":
		requireJSON(c)
	default:
		c.Next()
	}
}
