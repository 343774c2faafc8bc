package rest

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/service"
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
		SetRateHeaders(c, d)
		if !d.Allowed {
			renderError(c, apperr.RateLimited("too many requests for this API key", d.Window, d.Limit, d.RetryAfter))
			return
		}
		c.Next()
	}
}

// ClientAddr puts the client's address (gin's ClientIP, which believes
// X-Forwarded-For only from the configured trusted proxies) in the request
// context, where the service limits failed logins by it.
func ClientAddr(c *gin.Context) {
	c.Request = c.Request.WithContext(service.WithClientAddr(c.Request.Context(), c.ClientIP()))
	c.Next()
}

// setRefusalHeaders gives any RATE_LIMITED answer its Retry-After and
// window headers from the error's details, unless a limiter already set them.
func setRefusalHeaders(c *gin.Context, e *apperr.Error) {
	h := c.Writer.Header()
	if h.Get(headerRetryAfter) != "" {
		return
	}
	limit, _ := e.Details["limit"].(int64)
	retry, _ := e.Details["retry_after"].(int64)
	h.Set(headerRetryAfter, strconv.FormatInt(retry, 10))
	h.Set(headerLimit, strconv.FormatInt(limit, 10))
	h.Set(headerRemaining, "0")
	h.Set(headerReset, strconv.FormatInt(time.Now().Unix()+retry, 10))
}

// SetRateHeaders writes the window of a decision; a request let through
// unchecked (the store failed) gets none, since nothing was counted. GraphQL
// calls it once it knows what an operation costs.
func SetRateHeaders(c *gin.Context, d ratelimit.Decision) {
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
