package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// auditPagination is the pagination of GET /v1/audit: a cursor and no
// counts, so that a page costs one index range however long the trail.
type auditPagination struct {
	Limit      int        `json:"limit"`
	NextCursor nextCursor `json:"next_cursor"`
}

// bindAudit binds GET /audit, the audit trail (admins only).
func bindAudit(g *gin.RouterGroup, svc *service.Service) {
	g.GET("/audit", func(c *gin.Context) {
		p, err := parseAuditParams(c.Request.URL.Query())
		if err != nil {
			renderError(c, err)
			return
		}
		page, err := svc.ListAudit(c.Request.Context(), p)
		if err != nil {
			renderError(c, err)
			return
		}
		data := make([]resource.AuditEvent, len(page.Events))
		for i, e := range page.Events {
			data[i] = resource.NewAuditEvent(e)
		}
		pg := auditPagination{Limit: p.Limit, NextCursor: nextCursor{offered: true}}
		if page.Next != nil {
			pg.NextCursor.value = page.Next.Encode()
		}
		m := newMeta(c)
		m.Pagination = pg
		writeJSON(c, http.StatusOK, success{Success: true, Data: data, Meta: m})
	})
}
