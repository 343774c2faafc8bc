package rest

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/viewer"
)

// The rate-limit headers of DESIGN §3.
const (
	headerLimit      = "X-RateLimit-Limit"
	headerRemaining  = "X-RateLimit-Remaining"
	headerReset      = "X-RateLimit-Reset"
	headerRetryAfter = "Retry-After"
)

// RateLimit spends one request of the caller's API key and refuses it with
// 429 RATE_LIMITED when a window is exhausted, before any work is done. It
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
		d := l.Take(c.Request.Context(), v.KeyID)
		setRateHeaders(c, d)
		if !d.Allowed {
			renderError(c, apperr.RateLimited("too many requests for this API key", d.Window, d.Limit, d.RetryAfter))
			return
		}
		c.Next()
	}
}

// LoginGuard limits failed logins per client address against key guessing:
// it refuses a login with 429 once the address has used up its failures,
// and counts a login only when it answered INVALID_API_KEY, so successful
// logins cost nothing. The address is gin's ClientIP, which believes
// X-Forwarded-For only from the configured trusted proxies.
func LoginGuard(l *ratelimit.Limiter) gin.HandlerFunc {
	return func(c *gin.Context) {
		addr := c.ClientIP()
		d := l.Check(c.Request.Context(), addr)
		if !d.Allowed {
			setRateHeaders(c, d)
			renderError(c, apperr.RateLimited("too many failed logins from this address", d.Window, d.Limit, d.RetryAfter))
			return
		}
		c.Next()
		if e := apperr.From(errorOf(c)); e != nil && e.Code == apperr.CodeInvalidAPIKey {
			l.Spend(c.Request.Context(), addr)
		}
	}
}

// setRateHeaders writes the window of a decision; a request let through
// unchecked (the store failed) gets none, since nothing was counted.
func setRateHeaders(c *gin.Context, d ratelimit.Decision) {
	if !d.Checked {
		return
	}
	h := c.Writer.Header()
	h.Set(headerLimit, strconv.FormatInt(d.Limit, 10))
	h.Set(headerRemaining, strconv.FormatInt(d.Remaining, 10))
	h.Set(headerReset, strconv.FormatInt(d.Reset, 10))
	if !d.Allowed {
		h.Set(headerRetryAfter, strconv.FormatInt(d.RetryAfter, 10))
	}
}
