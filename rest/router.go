// Package rest is the JSON REST API under /v1: gin handlers that decode a
// request, call the service layer and render the envelope of DESIGN §3.
package rest

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// Options wire optional parts of the router; the zero value serves the API
// with no rate limits.
type Options struct {
	Logger *slog.Logger
	// RateLimit runs after authentication on every authenticated route.
	RateLimit gin.HandlerFunc
	// LoginGuard runs before login (limits failed logins per client address).
	LoginGuard gin.HandlerFunc
	// Mount adds routes beside /v1 (GraphQL, health, metrics) on the same
	// engine and middleware.
	Mount func(e *gin.Engine, authenticated ...gin.HandlerFunc)
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

	e.Use(
		requestID(opts.Logger), // first: everything after logs with it
		accessLog,
		recovery,
		securityHeaders,
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

	v1 := e.Group("/v1", limitBody, requireJSONBody)
	loginChain := []gin.HandlerFunc{}
	if opts.LoginGuard != nil {
		loginChain = append(loginChain, opts.LoginGuard)
	}
	v1.POST("/auth/login", append(loginChain, login(svc))...)

	api := v1.Group("", authenticated...)
	bindUsers(api, svc)
	bindItems(api, svc)
	bindWebhooks(api, svc)

	if opts.Mount != nil {
		opts.Mount(e, authenticated...)
	}
	return e
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
