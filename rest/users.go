package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
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
	g.POST("/users", createUser(svc))
	g.GET("/users/:id", func(c *gin.Context) {
		u, err := svc.GetUser(c.Request.Context(), c.Param("id"))
		if err != nil {
			renderError(c, err)
			return
		}
		renderData(c, http.StatusOK, resource.NewUser(u))
	})
	g.PUT("/users/:id", updateUser(svc))
	// Every user, or those of a role, disabled or not, or whose email starts
	// with a prefix, for admins (an owner picker, an audit); 403 for others.
	g.GET("/users", func(c *gin.Context) {
		page, limit, err := parsePageParams(c.Request.URL.Query())
		if err != nil {
			renderError(c, err)
			return
		}
		f, err := parseUserFilter(c.Request.URL.Query())
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

// Fields of a user body: what a client may set on create and on update, and
// userReadOnly those it may send back on PUT as it got them (decode.go); an
// email is the user's for good.
var (
	userCreateFields = []string{"email", "name", "role"}
	userUpdateFields = []string{"name", "role", "disabled"}
	userReadOnly     = readOnly{fixed: []string{"id", "email", "created_at"}, kept: []string{"updated_at"},
		reason: ": send it as it was read, or leave it out"}
)

// createUser answers POST /users {email, name, role?} (admins): 201 and
// Location.
func createUser(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := decodeObject(c)
		if err != nil {
			renderError(c, err)
			return
		}
		if err := body.allow(userCreateFields); err != nil {
			renderError(c, err)
			return
		}
		email, err := body.str("email")
		if err != nil {
			renderError(c, err)
			return
		}
		name, err := body.str("name")
		if err != nil {
			renderError(c, err)
			return
		}
		role, err := body.str("role")
		if err != nil {
			renderError(c, err)
			return
		}
		switch {
		case email == nil:
			renderError(c, apperr.Validation("email", "is required"))
			return
		case name == nil:
			renderError(c, apperr.Validation("name", "is required"))
			return
		}
		u, err := svc.CreateUser(c.Request.Context(), *email, *name, deref(role))
		if err != nil {
			renderError(c, err)
			return
		}
		c.Header("Location", "/v1/users/"+u.ID)
		renderData(c, http.StatusCreated, resource.NewUser(u))
	}
}

// updateUser answers PUT /users/{id} {name?, role?, disabled?}: admins any
// of them, a user their own name.
func updateUser(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := decodeObject(c)
		if err != nil {
			renderError(c, err)
			return
		}
		id := c.Param("id")
		if err := body.allow(userUpdateFields, userReadOnly.all()...); err != nil {
			renderError(c, err)
			return
		}
		if err := body.check(userReadOnly, func() (any, error) {
			u, err := svc.GetUser(c.Request.Context(), id)
			if err != nil {
				return nil, err
			}
			return resource.NewUser(u), nil
		}); err != nil {
			renderError(c, err)
			return
		}
		var ch service.UserChanges
		if ch.Name, err = body.str("name"); err != nil {
			renderError(c, err)
			return
		}
		if ch.Role, err = body.str("role"); err != nil {
			renderError(c, err)
			return
		}
		if ch.Disabled, err = body.boolean("disabled"); err != nil {
			renderError(c, err)
			return
		}
		u, err := svc.UpdateUser(c.Request.Context(), id, ch)
		if err != nil {
			renderError(c, err)
			return
		}
		renderData(c, http.StatusOK, resource.NewUser(u))
	}
}

// deref is a string field's value, "" when absent.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
