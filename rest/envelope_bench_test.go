package rest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/resource"
)

// benchItems is a page of 20 items as the list renders them.
func benchItems() []resource.Item {
	t := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	items := make([]resource.Item, 20)
	for i := range items {
		items[i] = resource.Item{
			ID: "item_01jabcdefghjkmnpqrstvwxyz0", Name: "An item of the benchmark",
			Description: "A description of ordinary length for an item.", Status: "active",
			UserID: "user_01jabcdefghjkmnpqrstvwxyz0", CreatedAt: t, UpdatedAt: t,
		}
	}
	return items
}

// BenchmarkRenderEnvelope encodes the success envelope of a list page and of
// one item, and the failure envelope.
func BenchmarkRenderEnvelope(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	items := benchItems()
	cases := []struct {
		name   string
		render func(c *gin.Context)
	}{
		{"page of 20", func(c *gin.Context) {
			renderPage(c, items, pagination{Page: 1, Limit: 20, Total: 1000, Pages: 50})
		}},
		{"one item", func(c *gin.Context) { renderData(c, 200, items[0]) }},
		{"validation error", func(c *gin.Context) { renderError(c, apperr.Validation("name", "is required")) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c, _ := gin.CreateTestContext(w)
				c.Request = httptest.NewRequest("GET", "/v1/items", nil)
				c.Set(requestIDKey, "01jabcdefghjkmnpqrstvwxyz0")
				tc.render(c)
				if w.Body.Len() == 0 {
					b.Fatal("empty body")
				}
			}
		})
	}
}
