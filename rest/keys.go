package rest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// Fields of a key body: what a client may set on create and on update, and
// what it may send back on update as it got it (read-only: decode.go). The
// scopes and expiry are set when a key is made and never change: sent with
// another value they are refused, so that a client does not believe it
// narrowed a key's scopes or moved its expiry.
var (
	keyCreateFields = []string{"label", "scopes", "expires_at", "user_id"}
	keyUpdateFields = []string{"label", "rate_limit_per_minute", "rate_limit_per_hour"}
	keyReadOnly     = readOnly{fixed: []string{"id", "user_id", "prefix", "created_at", "scopes", "expires_at"},
		kept:   []string{"last_used_at", "revoked_at"},
		reason: ": it cannot be changed; for other scopes or expiry, create a new key and revoke this one"}
)

type apiKeys struct{ svc *service.Service }

// bindKeys binds the /keys routes (DESIGN §8).
func bindKeys(g *gin.RouterGroup, svc *service.Service) {
	h := apiKeys{svc: svc}
	g.GET("/keys", h.list)
	g.POST("/keys", h.create)
	g.GET("/keys/:id", h.get)
	g.PUT("/keys/:id", h.update)
	g.DELETE("/keys/:id", h.revoke)
}

func (h apiKeys) list(c *gin.Context) {
	p, err := parseKeyListParams(c.Request.URL.Query())
	if err != nil {
		renderError(c, err)
		return
	}
	res, err := h.svc.ListAPIKeys(c.Request.Context(), p)
	if err != nil {
		renderError(c, err)
		return
	}
	pg := pagination{
		Page: 1, Limit: p.Limit, Total: res.Total, Pages: service.Pages(res.Total, p.Limit),
		NextCursor: nextCursor{offered: true},
	}
	if p.After != nil {
		pg.Page = 0 // unknown: see pagination.Page
	}
	if res.More && len(res.Keys) > 0 {
		last := res.Keys[len(res.Keys)-1]
		pg.NextCursor.value = service.Keyset{CreatedAt: last.CreatedAt, ID: last.ID}.Encode()
	}
	renderPage(c, resource.NewAPIKeys(res.Keys), pg)
}

func (h apiKeys) get(c *gin.Context) {
	k, err := h.svc.GetAPIKey(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewAPIKey(k))
}

func (h apiKeys) create(c *gin.Context) {
	body, err := decodeObject(c)
	if err != nil {
		renderError(c, err)
		return
	}
	if err := body.allow(keyCreateFields); err != nil {
		renderError(c, err)
		return
	}
	var in service.KeyInput
	if in.Label, err = body.str("label"); err != nil {
		renderError(c, err)
		return
	}
	if in.Scopes, err = body.strs("scopes"); err != nil {
		renderError(c, err)
		return
	}
	if in.ExpiresAt, err = body.timestamp("expires_at"); err != nil {
		renderError(c, err)
		return
	}
	if in.UserID, err = body.str("user_id"); err != nil {
		renderError(c, err)
		return
	}
	k, err := h.svc.CreateAPIKey(c.Request.Context(), in)
	if err != nil {
		renderError(c, err)
		return
	}
	c.Header("Location", "/v1/keys/"+k.ID)
	renderData(c, http.StatusCreated, resource.NewAPIKeyWithSecret(k.APIKey, k.Secret))
}

func (h apiKeys) update(c *gin.Context) {
	body, err := decodeObject(c)
	if err != nil {
		renderError(c, err)
		return
	}
	id := c.Param("id")
	if err := body.allow(keyUpdateFields, keyReadOnly.all()...); err != nil {
		renderError(c, err)
		return
	}
	if err := body.check(keyReadOnly, func() (any, error) {
		k, err := h.svc.GetAPIKey(c.Request.Context(), id)
		if err != nil {
			return nil, err
		}
		return resource.NewAPIKey(k), nil
	}); err != nil {
		renderError(c, err)
		return
	}
	var ch service.KeyChanges
	if ch.Label, err = body.str("label"); err != nil {
		renderError(c, err)
		return
	}
	if ch.RateLimitPerMinute, err = body.limit("rate_limit_per_minute"); err != nil {
		renderError(c, err)
		return
	}
	if ch.RateLimitPerHour, err = body.limit("rate_limit_per_hour"); err != nil {
		renderError(c, err)
		return
	}
	k, err := h.svc.UpdateAPIKey(c.Request.Context(), id, ch)
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, resource.NewAPIKey(k))
}

func (h apiKeys) revoke(c *gin.Context) {
	k, err := h.svc.RevokeAPIKey(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, gin.H{"id": k.ID, "revoked": true})
}

// limit returns a rate-limit field: absent, null (the server's default)
// or a whole number, which the service bounds.
func (o object) limit(name string) (service.LimitChange, error) {
	raw, ok := o[name]
	if !ok {
		return service.LimitChange{}, nil
	}
	var n *int
	if err := json.Unmarshal(raw, &n); err != nil {
		return service.LimitChange{}, apperr.Validation(name, fmt.Sprintf("must be a whole number from 1 to %d, or null for the server's default", service.MaxKeyRateLimit))
	}
	return service.LimitChange{Set: true, Value: n}, nil
}
