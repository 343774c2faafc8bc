package rest

import (
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/viewer"
)

// RateLimit spends one request of the caller's API key and refuses it with
// 429 RATE_LIMITED when a window is exhausted, before any work is done. A
// key with its own limits (set by an admin) is held to those, read from
// its cached state with the viewer. It
// runs after Authenticate, on /v1 and /graphql alike, so all tokens of a key
// share one budget whichever API they call.
func RateLimit(l *ratelimit.Limiter) gin.HandlerFunc {
	return func(c *gin.Context) {
		v, ok := viewer.FromContext(c.Request.Context())
		if !ok {
			// Authenticate lets nobody through without a viewer; an
			// anonymous request here has nothing to be counted against.
			c.Next()
			return
		}
		d := l.Take(c.Request.Context(), v.KeyID, v.Limits)
		httpapi.SetRateHeaders(c, d)
		if !d.Allowed {
			renderError(c, apperr.RateLimited("too many requests for this API key", d.Window, d.Limit, d.RetryAfter))
			return
		}
		c.Next()
	}
}
