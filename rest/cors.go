package rest

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// What a browser app may do cross-origin. Clients authenticate with a bearer
// token, never a cookie, so credentials are not allowed and "*" is safe.
const (
	corsMethods = "GET, POST, PUT, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type, X-Request-ID, If-Match, If-None-Match, Idempotency-Key"
	corsExpose  = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-ID, Location, ETag, Idempotent-Replayed"
)

// cors answers preflight requests from allowed origins itself (the router
// would refuse OPTIONS with 405) and marks the other responses to them as
// readable by the page. Requests from other origins pass unmarked, so the
// browser keeps their responses from the page.
func cors(origins []string) gin.HandlerFunc {
	anyOrigin := false
	allowed := map[string]bool{}
	for _, o := range origins {
		if o == "*" {
			anyOrigin = true
		}
		// Browsers send an origin without a trailing slash.
		allowed[strings.TrimRight(o, "/")] = true
	}
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" || len(allowed) == 0 {
			c.Next()
			return
		}
		h := c.Writer.Header()
		h.Add("Vary", "Origin")
		if !anyOrigin && !allowed[origin] {
			c.Next()
			return
		}
		if anyOrigin {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExpose)
		c.Next()
	}
}
