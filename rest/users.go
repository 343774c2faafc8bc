package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// bindUsers binds the /users routes.
func bindUsers(g *gin.RouterGroup, svc *service.Service) {
	g.GET("/users/me", func(c *gin.Context) {
		u, err := svc.Me(c.Request.Context())
		if err != nil {
			renderError(c, err)
			return
		}
		renderData(c, http.StatusOK, resource.NewUser(u))
	})
}
