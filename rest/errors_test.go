package rest

import (
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
)

// TestUnexpectedErrors: anything unexpected is a 500 INTERNAL_ERROR whose
// message hides the cause, whether returned or panicked; apperr codes keep
// their statuses.
func TestUnexpectedErrors(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	const secret = "pq: password authentication failed for user secret_user"
	cases := []struct {
		name    string
		handler gin.HandlerFunc
		status  int
		code    string
	}{
		{"returned error", func(c *gin.Context) { renderError(c, errors.New(secret)) }, 500, "INTERNAL_ERROR"},
		{"panic", func(c *gin.Context) { panic(secret) }, 500, "INTERNAL_ERROR"},
		{"wrapped apperr keeps its code", func(c *gin.Context) {
			renderError(c, errors.Join(errors.New("ctx"), apperr.NotFound("item")))
		}, 404, "NOT_FOUND"},
		{"closed database", func(c *gin.Context) { renderError(c, errors.New("sql: database is closed")) }, 503, "UNAVAILABLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := gin.New()
			e.Use(requestID(slog.New(slog.NewTextHandler(io.Discard, nil))), recovery)
			e.GET("/", tc.handler)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(body, `"code":"`+tc.code+`"`) {
				t.Fatalf("got %d %s, want %d %s", rec.Code, body, tc.status, tc.code)
			}
			if strings.Contains(body, "secret_user") {
				t.Fatalf("internals leaked: %s", body)
			}
		})
	}
}
