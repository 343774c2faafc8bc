package server

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/viewer"
)

// account is whom a GraphQL request is charged to: the caller's API key, or
// its client address when it has no token. The price is known only once the
// operation is parsed, so the charge is made by the cost extension, inside
// gqlgen, and its outcome reaches the HTTP response through here.
type account struct {
	limiter *ratelimit.Limiter
	id      string
	// own are the key's own limits (viewer.Limits); nil: the limiter's.
	own ratelimit.Own
	// keys is the per-key limiter, for a WebSocket whose connection_init
	// authenticates a connection opened without a token.
	keys      *ratelimit.Limiter
	anonymous bool
	c         *gin.Context
	// token is the request's bearer token, for a stream to check again
	// (tokenFrom).
	token string

	// charged and decision are the outcome of the charge, for the response's
	// extensions.cost.
	charged  bool
	decision ratelimit.Decision
	// status, when set, replaces the HTTP status gqlgen chooses for an
	// operation refused before it ran (429, 401), so that GraphQL answers a
	// refusal with the status REST gives it.
	status int
}

type accountKey struct{}

func accountFrom(ctx context.Context) *account {
	a, _ := ctx.Value(accountKey{}).(*account)
	return a
}

// charge spends points of the account's budget and sets the rate-limit
// headers; a nil limiter (no limits configured) lets everything through.
func (a *account) charge(ctx context.Context, points int) ratelimit.Decision {
	if a.limiter == nil {
		return ratelimit.Decision{Allowed: true}
	}
	id, own := a.id, a.own
	if s := socketFrom(ctx); s != nil && !a.anonymous {
		// A socket's operations are charged to its key's limits as the
		// operation's own check found them, not as they were at the upgrade.
		if v := s.currentViewer(); v.KeyID != "" {
			id, own = v.KeyID, v.Limits
		}
	}
	d := a.limiter.TakeN(ctx, id, int64(points), own)
	a.charged, a.decision = true, d
	httpapi.SetRateHeaders(a.c, d)
	return d
}

// billing opens the account of a /graphql request: the API key of the
// viewer that authentication found, or else the client address.
func billing(keys, anonymous *ratelimit.Limiter) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		a := &account{c: c, keys: keys}
		a.token, _ = httpapi.Bearer(c.GetHeader("Authorization"))
		if v, ok := viewer.FromContext(ctx); ok {
			a.limiter, a.id, a.own = keys, v.KeyID, v.Limits
		} else {
			a.limiter, a.id, a.anonymous = anonymous, c.ClientIP(), true
		}
		c.Writer = statusWriter{ResponseWriter: c.Writer, a: a}
		c.Request = c.Request.WithContext(context.WithValue(ctx, accountKey{}, a))
		c.Next()
	}
}

// statusWriter applies account.status to the status gqlgen writes.
type statusWriter struct {
	gin.ResponseWriter
	a *account
}

// WriteHeader implements http.ResponseWriter.
func (w statusWriter) WriteHeader(code int) {
	if w.a.status != 0 {
		code = w.a.status
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter: a transport that writes without
// setting a status (SSE) still answers a refusal with account.status.
func (w statusWriter) Write(b []byte) (int, error) {
	if w.a.status != 0 && !w.Written() {
		w.WriteHeader(w.a.status)
	}
	return w.ResponseWriter.Write(b)
}
