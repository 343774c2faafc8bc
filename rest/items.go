package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

type items struct{ svc *service.Service }

// bindItems binds the /items routes.
func bindItems(g *gin.RouterGroup, svc *service.Service) {
	h := items{svc: svc}
	g.GET("/items", h.list)
	g.POST("/items", idempotent(svc), h.create)
	g.GET("/items/:id", h.get)
	g.PUT("/items/:id", h.update)
	g.DELETE("/items/:id", h.delete)
}

func (h items) list(c *gin.Context) {
	p, err := parseListParams(c.Request.URL.Query())
	if err != nil {
		renderError(c, err)
		return
	}
	page, err := h.svc.ListItems(c.Request.Context(), p)
	if err != nil {
		renderError(c, err)
		return
	}
	pg := pagination{
		Page:       p.Page,
		Limit:      p.Limit,
		Total:      page.Total,
		Pages:      service.Pages(page.Total, p.Limit),
		NextCursor: nextCursor{offered: true},
	}
	if p.After != nil {
		pg.Page = 0 // unknown: see pagination.Page
	}
	if page.Next != nil {
		pg.NextCursor.value = page.Next.Encode()
	}
	if done, err := notModified(c, service.PageETag(page)); err != nil || done {
		if err != nil {
			renderError(c, err)
		}
		return
	}
	renderPage(c, resource.NewItems(page.Items), pg)
}

func (h items) get(c *gin.Context) {
	it, err := h.svc.GetItem(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	if done, err := notModified(c, service.ETag(it)); err != nil || done {
		if err != nil {
			renderError(c, err)
		}
		return
	}
	renderData(c, http.StatusOK, resource.NewItem(it))
}

func (h items) create(c *gin.Context) {
	o, err := itemBody.decode(c, nil)
	if err != nil {
		renderError(c, err)
		return
	}
	in, err := decodeCreateItemInput(o)
	if err != nil {
		renderError(c, err)
		return
	}
	it, err := h.svc.CreateItem(c.Request.Context(), in)
	if err != nil {
		renderError(c, err)
		return
	}
	c.Header("Location", "/v1/items/"+it.ID)
	c.Header("ETag", service.ETag(it))
	renderData(c, http.StatusCreated, resource.NewItem(it))
}

func (h items) update(c *gin.Context) {
	id := c.Param("id")
	o, err := itemBody.decode(c, func() (any, error) {
		it, err := h.svc.GetItem(c.Request.Context(), id)
		if err != nil {
			return nil, err
		}
		return resource.NewItem(it), nil
	})
	if err != nil {
		renderError(c, err)
		return
	}
	in, err := decodeUpdateItemInput(o)
	if err != nil {
		renderError(c, err)
		return
	}
	pre, err := ifMatch(c)
	if err != nil {
		renderError(c, err)
		return
	}
	it, err := h.svc.UpdateItemIfMatch(c.Request.Context(), id, in, pre)
	if err != nil {
		renderError(c, err)
		return
	}
	c.Header("ETag", service.ETag(it))
	renderData(c, http.StatusOK, resource.NewItem(it))
}

func (h items) delete(c *gin.Context) {
	id := c.Param("id")
	pre, err := ifMatch(c)
	if err != nil {
		renderError(c, err)
		return
	}
	if err := h.svc.DeleteItemIfMatch(c.Request.Context(), id, pre); err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}
