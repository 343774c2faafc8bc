package rest

import (
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
)

// idempotent is httpapi.Idempotent for a REST route that creates: the request is its
// method, route and body, the body compared as JSON (key order and spacing
// do not matter). A secret the response showed is left out of the record,
// so a retry answers the resource as GET shows it (POST /v1/webhooks: the
// endpoint without its secret).
func idempotent(svc *service.Service) gin.HandlerFunc {
	return httpapi.Idempotent(svc, httpapi.IdempotencyScope{
		Fingerprint: func(c *gin.Context, body []byte) (string, bool, error) {
			return service.Fingerprint([]byte(c.Request.Method), []byte(c.FullPath()), httpapi.CanonicalJSON(body)), true, nil
		},
		DropSecrets: true,
	})
}
