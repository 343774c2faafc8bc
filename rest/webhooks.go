package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// Fields of a webhook body: what a client may set, and what it may send back
// as it got it (read-only: decode.go). The delivery state moves on its own.
var (
	webhookFields   = []string{"url", "description", "events", "active"}
	webhookReadOnly = readOnly{fixed: []string{"id", "user_id", "created_at"},
		kept:   []string{"updated_at", "previous_secret_expires_at", "consecutive_failures", "backoff_until"},
		reason: ": send it as it was read, or leave it out"}
)

type webhooks struct{ svc *service.Service }

// bindWebhooks binds the /webhooks routes (DESIGN §4).
func bindWebhooks(g *gin.RouterGroup, svc *service.Service) {
	h := webhooks{svc: svc}
	g.GET("/webhooks", h.list)
	g.POST("/webhooks", idempotent(svc), h.create)
	g.GET("/webhooks/:id", h.get)
	g.PUT("/webhooks/:id", h.update)
	g.DELETE("/webhooks/:id", h.delete)
	g.POST("/webhooks/:id/rotate-secret", h.rotate)
	g.GET("/webhooks/:id/deliveries", h.deliveries)
	g.POST("/webhooks/:id/deliveries/:delivery_id/retry", h.retry)
	g.POST("/webhooks/:id/recover", h.recover)
}

func (h webhooks) list(c *gin.Context) {
	page, limit, err := parsePageParams(c.Request.URL.Query())
	if err != nil {
		renderError(c, err)
		return
	}
	res, err := h.svc.ListWebhooks(c.Request.Context(), service.PageParams{Page: page, Limit: limit})
	if err != nil {
		renderError(c, err)
		return
	}
	renderPage(c, resource.NewWebhooks(res.Webhooks), pagination{
		Page: page, Limit: limit, Total: res.Total, Pages: service.Pages(res.Total, limit),
	})
}

func (h webhooks) get(c *gin.Context) {
	ep, err := h.svc.GetWebhook(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewWebhook(ep))
}

func (h webhooks) create(c *gin.Context) {
	in, err := webhookInput(c, nil, nil)
	if err != nil {
		renderError(c, err)
		return
	}
	ep, err := h.svc.CreateWebhook(c.Request.Context(), in)
	if err != nil {
		renderError(c, err)
		return
	}
	c.Header("Location", "/v1/webhooks/"+ep.ID)
	renderData(c, http.StatusCreated, resource.NewWebhookWithSecret(ep))
}

func (h webhooks) update(c *gin.Context) {
	id := c.Param("id")
	in, err := webhookInput(c, &webhookReadOnly, func() (any, error) {
		ep, err := h.svc.GetWebhook(c.Request.Context(), id)
		if err != nil {
			return nil, err
		}
		return resource.NewWebhook(ep), nil
	})
	if err != nil {
		renderError(c, err)
		return
	}
	ep, err := h.svc.UpdateWebhook(c.Request.Context(), id, in)
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewWebhook(ep))
}

func (h webhooks) delete(c *gin.Context) {
	id := c.Param("id")
	if err := h.svc.DeleteWebhook(c.Request.Context(), id); err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}

func (h webhooks) rotate(c *gin.Context) {
	ep, err := h.svc.RotateWebhookSecret(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewWebhookWithSecret(ep))
}

func (h webhooks) deliveries(c *gin.Context) {
	p, err := parseDeliveryParams(c.Request.URL.Query())
	if err != nil {
		renderError(c, err)
		return
	}
	res, err := h.svc.ListDeliveries(c.Request.Context(), c.Param("id"), p)
	if err != nil {
		renderError(c, err)
		return
	}
	renderPage(c, resource.NewDeliveries(res.Deliveries), pagination{
		Page: p.Page, Limit: p.Limit, Total: res.Total, Pages: service.Pages(res.Total, p.Limit),
	})
}

func (h webhooks) retry(c *gin.Context) {
	d, err := h.svc.RetryDelivery(c.Request.Context(), c.Param("id"), c.Param("delivery_id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewDelivery(d))
}

func (h webhooks) recover(c *gin.Context) {
	body, err := decodeObject(c)
	if err != nil {
		renderError(c, err)
		return
	}
	if err := body.allow([]string{"since"}); err != nil {
		renderError(c, err)
		return
	}
	since, err := body.timestamp("since")
	if err != nil {
		renderError(c, err)
		return
	}
	id := c.Param("id")
	n, err := h.svc.RecoverDeliveries(c.Request.Context(), id, since)
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewRecovery(id, *since, n))
}

// webhookInput decodes a webhook body: on create (ro nil) the settable
// fields only; on update also the read-only ones, checked against current.
func webhookInput(c *gin.Context, ro *readOnly, current func() (any, error)) (service.WebhookInput, error) {
	var in service.WebhookInput
	body, err := decodeObject(c)
	if err != nil {
		return in, err
	}
	if ro == nil {
		ro = &readOnly{}
	}
	if err := body.allow(webhookFields, ro.all()...); err != nil {
		return in, err
	}
	if err := body.check(*ro, current); err != nil {
		return in, err
	}
	if in.URL, err = body.str("url"); err != nil {
		return in, err
	}
	if in.Description, err = body.str("description"); err != nil {
		return in, err
	}
	if in.Events, err = body.strs("events"); err != nil {
		return in, err
	}
	if in.Active, err = body.boolean("active"); err != nil {
		return in, err
	}
	return in, nil
}
