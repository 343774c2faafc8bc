package httpapi

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/ratelimit"
)

// The rate-limit headers of DESIGN §3.
const (
	HeaderLimit      = "X-RateLimit-Limit"
	HeaderRemaining  = "X-RateLimit-Remaining"
	HeaderReset      = "X-RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
)

// setRefusalHeaders gives any RATE_LIMITED answer its Retry-After and
// window headers from the error's details, unless a limiter already set them.
func setRefusalHeaders(c *gin.Context, e *apperr.Error) {
	h := c.Writer.Header()
	if h.Get(HeaderRetryAfter) != "" {
		return
	}
	limit, _ := e.Details["limit"].(int64)
	retry, _ := e.Details["retry_after"].(int64)
	h.Set(HeaderRetryAfter, strconv.FormatInt(retry, 10))
	h.Set(HeaderLimit, strconv.FormatInt(limit, 10))
	h.Set(HeaderRemaining, "0")
	h.Set(HeaderReset, strconv.FormatInt(time.Now().Unix()+retry, 10))
}

// SetRateHeaders writes the window of a decision; a request let through
// unchecked (the store failed) gets none, since nothing was counted. GraphQL
// calls it once it knows what an operation costs.
func SetRateHeaders(c *gin.Context, d ratelimit.Decision) {
	if !d.Checked {
		return
	}
	h := c.Writer.Header()
	h.Set(HeaderLimit, strconv.FormatInt(d.Limit, 10))
	h.Set(HeaderRemaining, strconv.FormatInt(d.Remaining, 10))
	h.Set(HeaderReset, strconv.FormatInt(d.Reset, 10))
	if !d.Allowed {
		h.Set(HeaderRetryAfter, strconv.FormatInt(d.RetryAfter, 10))
	}
}
