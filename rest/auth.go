package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
)

// login handles POST /v1/auth/login.
func login(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := decodeObject(c)
		if err != nil {
			renderError(c, err)
			return
		}
		if err := body.allow([]string{"api_key"}); err != nil {
			renderError(c, err)
			return
		}
		key, err := body.str("api_key")
		if err != nil {
			renderError(c, err)
			return
		}
		if key == nil {
			renderError(c, apperr.Validation("api_key", "is required"))
			return
		}
		tok, err := svc.Login(c.Request.Context(), *key)
		if err != nil {
			renderError(c, err)
			return
		}
		renderData(c, http.StatusOK, tok)
	}
}

// Authenticate admits requests with a valid bearer token and puts their
// viewer in the request context. It is shared by /v1 and /graphql.
func Authenticate(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		token, ok := httpapi.Bearer(c.GetHeader("Authorization"))
		if !ok {
			renderError(c, apperr.Unauthorized("an Authorization: Bearer <token> header is required"))
			return
		}
		v, err := svc.Authenticate(c.Request.Context(), token)
		if err != nil {
			renderError(c, err)
			return
		}
		ctx := viewer.NewContext(c.Request.Context(), v)
		if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
			// The request id rides along for the audit records of the
			// changes it makes; a read makes none, and is spared the copy.
			ctx = service.WithRequestID(ctx, c.GetString(requestIDKey))
		}
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}
