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
	// Every user, or those of a role, disabled or not, or whose email starts
	// with a prefix, for admins (an owner picker, an audit); 403 for others.
	g.GET("/users", func(c *gin.Context) {
		page, limit, err := service.ParsePageParams(c.Request.URL.Query())
		if err != nil {
			renderError(c, err)
			return
		}
		f, err := service.ParseUserFilter(c.Request.URL.Query())
		if err != nil {
			renderError(c, err)
			return
		}
		res, err := svc.ListUsers(c.Request.Context(), page, limit, f)
		if err != nil {
			renderError(c, err)
			return
		}
		users := make([]resource.User, len(res.Users))
		for i, u := range res.Users {
			users[i] = resource.NewUser(u)
		}
		renderPage(c, users, pagination{
			Page: page, Limit: limit, Total: res.Total, Pages: service.Pages(res.Total, limit),
		})
	})
}
