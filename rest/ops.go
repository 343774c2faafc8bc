package rest

import (
	"bytes"
	"context"
	_ "embed" // the OpenAPI document
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/web"
)

// openAPIDocument is the OpenAPI 3.1 description of /v1, written by hand to
// match DESIGN §3; the test suite validates every REST response against it.
//
//go:embed openapi/openapi.json
var openAPIDocument []byte

// OpenAPI returns the OpenAPI document of /v1 (JSON), for tools and tests.
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

// readyTimeout bounds the readiness check: a load balancer asks often and a
// database that takes longer than this is as good as gone.
const readyTimeout = 2 * time.Second

// bindOps binds the operator's endpoints: none needs a token or spends a
// rate limit, so probes and scrapers work without credentials.
func bindOps(e *gin.Engine, opts Options) {
	e.GET("/healthz", func(c *gin.Context) {
		renderData(c, http.StatusOK, gin.H{"status": "ok"})
	})
	e.GET("/readyz", func(c *gin.Context) {
		if opts.Ready != nil {
			ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
			defer cancel()
			if err := opts.Ready(ctx); err != nil {
				if e := apperr.From(err); e.Code == apperr.CodeUnavailable {
					renderError(c, e) // unreachable, or cannot take writes
				} else {
					renderError(c, apperr.Unavailable(err))
				}
				return
			}
		}
		renderData(c, http.StatusOK, gin.H{"status": "ready"})
	})
	if opts.Metrics != nil {
		e.GET("/metrics", func(c *gin.Context) {
			var b bytes.Buffer
			opts.Metrics.WritePrometheus(&b)
			c.Data(http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", b.Bytes())
		})
	}
	e.GET("/v1/openapi.json", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIDocument)
	})
	// The docs page and the scripts of both pages (/docs, /playground) come
	// from the binary, never a CDN: they work with no internet access.
	e.GET("/docs", gin.WrapH(web.Docs("/v1/openapi.json")))
	e.GET("/favicon.ico", gin.WrapH(web.Favicon()))
	assets := web.Assets()
	e.GET(web.AssetsPath+"*file", func(c *gin.Context) {
		if !web.IsAsset(c.Request.URL.Path) {
			renderError(c, apperr.NotFound("asset"))
			return
		}
		assets.ServeHTTP(c.Writer, c.Request)
	})
}

// environment marks every response of a sandbox server, so that a client
// can tell test data from real data.
func environment(sandbox bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if sandbox {
			c.Header("X-Environment", "sandbox")
		}
		c.Next()
	}
}

// isProbe reports whether a route is polled by load balancers and scrapers,
// whose successful requests are logged at debug level only.
func isProbe(route string) bool {
	return route == "/healthz" || route == "/readyz" || route == "/metrics"
}
