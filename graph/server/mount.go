package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/web"
)

// Routes are the paths this package serves.
const (
	Endpoint       = "/graphql"
	PlaygroundPath = "/playground"
)

// MountOptions are what /graphql shares with /v1.
type MountOptions struct {
	// Playground serves GraphiQL at /playground (web.Playground: every
	// asset from this binary, sign-in with an API key).
	Playground bool
	// Authenticate is REST's token check; it runs only for a request that
	// carries an Authorization header, so that login and introspection
	// work anonymously while a bad or expired token still fails with
	// UNAUTHORIZED or TOKEN_EXPIRED.
	Authenticate gin.HandlerFunc
	// Keys is the per-key limiter REST spends one unit of per request;
	// GraphQL spends an operation's points of it. Anonymous is the
	// per-address limiter of requests without a token. Nil limits nothing.
	Keys, Anonymous *ratelimit.Limiter
	// Idempotency, when set, makes a mutation safe to retry with an
	// Idempotency-Key header (Idempotency); it runs after billing, so a
	// replay is charged.
	Idempotency gin.HandlerFunc
}

// Mount serves h at /graphql on e, and GraphiQL at /playground. Every
// failure of the shared middleware is rendered GraphQL-shaped.
func Mount(e *gin.Engine, h http.Handler, opts MountOptions) {
	chain := []gin.HandlerFunc{httpapi.GraphQLErrors, noKeyOnSockets, socketRequestID, httpapi.LimitBody, jsonBody, httpapi.ClientAddr, streamDeadlines}
	if opts.Authenticate != nil {
		chain = append(chain, whenAuthorized(opts.Authenticate))
	}
	chain = append(chain, billing(opts.Keys, opts.Anonymous))
	if opts.Idempotency != nil {
		chain = append(chain, opts.Idempotency)
	}
	chain = append(chain, gin.WrapH(h))
	e.GET(Endpoint, chain...)
	e.POST(Endpoint, chain...)
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace} {
		e.Handle(m, Endpoint, httpapi.GraphQLErrors, methodNotAllowed)
	}
	if opts.Playground {
		e.GET(PlaygroundPath, gin.WrapH(web.Playground(Endpoint)))
	}
}

// socketRequestID gives a WebSocket's operations the request id of its
// upgrade (X-Request-ID, which the socket's access line carries): their
// audit records keep it, as those of a POST keep the POST's. The upgrade is
// a GET, which REST's Authenticate leaves without one.
func socketRequestID(c *gin.Context) {
	if c.Request.Method == http.MethodGet && c.GetHeader("Upgrade") != "" {
		c.Request = c.Request.WithContext(service.WithRequestID(c.Request.Context(), c.GetString(httpapi.RequestIDKey)))
	}
}

// whenAuthorized runs m only for a request with an Authorization header;
// gin moves on to the next handler when it returns without aborting.
func whenAuthorized(m gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.GetHeader("Authorization") != "" {
			m(c)
		}
	}
}
