package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// MaxBodyBytes bounds a request body: the contract's limit (docs/limits.md).
const MaxBodyBytes = 1 << 20

// LimitBody bounds a request body: PAYLOAD_TOO_LARGE past MaxBodyBytes when
// the length is declared, and an error on reading past it when it is not.
func LimitBody(c *gin.Context) {
	if c.Request.ContentLength > MaxBodyBytes {
		Fail(c, apperr.New(apperr.CodePayloadTooLarge, fmt.Sprintf("the request body exceeds %d bytes", MaxBodyBytes)))
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
	c.Next()
}

// Bearer extracts the token of an "Authorization: Bearer <token>" header.
func Bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// ClientAddr puts the client's address (gin's ClientIP, which believes
// X-Forwarded-For only from the configured trusted proxies) in the request
// context, where the service limits failed logins by it.
func ClientAddr(c *gin.Context) {
	c.Request = c.Request.WithContext(service.WithClientAddr(c.Request.Context(), c.ClientIP()))
	c.Next()
}
