package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
)

// TestFail renders one error per row on each transport: the /v1 envelope, or
// a GraphQL response after GraphQLErrors, with the same status and code.
func TestFail(t *testing.T) {
	gin.SetMode(gin.TestMode)
	rows := []struct {
		name       string
		graphql    bool
		err        error
		status     int
		code       apperr.Code
		retryAfter string
	}{
		{"envelope validation", false, apperr.Validation("name", "is required"), http.StatusBadRequest, apperr.CodeValidation, ""},
		{"graphql validation", true, apperr.Validation("name", "is required"), http.StatusBadRequest, apperr.CodeValidation, ""},
		{"envelope unknown error is internal", false, errors.New("boom"), http.StatusInternalServerError, apperr.CodeInternal, ""},
		{"graphql rate limited", true, apperr.RateLimited("slow down", "minute", 10, 7), http.StatusTooManyRequests, apperr.CodeRateLimited, "7"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			e := gin.New()
			e.GET("/", func(c *gin.Context) {
				if row.graphql {
					httpapi.GraphQLErrors(c)
					return
				}
				c.Next()
			}, func(c *gin.Context) { httpapi.Fail(c, row.err) })
			w := httptest.NewRecorder()
			e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			if w.Code != row.status {
				t.Fatalf("status %d, want %d", w.Code, row.status)
			}
			if got := w.Header().Get(httpapi.HeaderRetryAfter); got != row.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, row.retryAfter)
			}
			var body struct {
				Success *bool `json:"success"`
				Error   struct {
					Code apperr.Code `json:"code"`
				} `json:"error"`
				Errors []struct {
					Extensions struct {
						Code apperr.Code `json:"code"`
					} `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			code := body.Error.Code
			if row.graphql {
				if body.Success != nil || len(body.Errors) != 1 {
					t.Fatalf("want a GraphQL response, got %s", w.Body)
				}
				code = body.Errors[0].Extensions.Code
			} else if body.Success == nil || *body.Success {
				t.Fatalf("want the failure envelope, got %s", w.Body)
			}
			if code != row.code {
				t.Errorf("code %s, want %s", code, row.code)
			}
			if strings.Contains(w.Body.String(), "boom") {
				t.Errorf("an internal cause reached the response: %s", w.Body)
			}
		})
	}
}

// TestBearer reads the token of an Authorization header, one form per row.
func TestBearer(t *testing.T) {
	rows := []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer   ", "", false},
		{"", "", false},
	}
	for _, row := range rows {
		token, ok := httpapi.Bearer(row.header)
		if token != row.token || ok != row.ok {
			t.Errorf("Bearer(%q) = %q, %v; want %q, %v", row.header, token, ok, row.token, row.ok)
		}
	}
}
