package rest

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/service"
)

// Conditional requests (RFC 9110 §13): an item answers with its ETag; a GET
// whose If-None-Match names it is 304 Not Modified, a PUT or DELETE whose
// If-Match does not is 412 PRECONDITION_FAILED and changes nothing. Without
// the headers, nothing here applies.

// header is a request header's value, its lines joined as one list.
func header(c *gin.Context, name string) string {
	return strings.Join(c.Request.Header.Values(name), ", ")
}

// ifMatch is the request's If-Match, as the service's condition on a change.
func ifMatch(c *gin.Context) (service.Precondition, error) {
	return service.ParseIfMatch(header(c, "If-Match"))
}

// notModified sets etag as the response's ETag and, when the request's
// If-None-Match names it, answers 304 with no body and reports true; the
// caller then renders nothing. A malformed If-None-Match is an error.
func notModified(c *gin.Context, etag string) (bool, error) {
	match, err := service.NoneMatch(header(c, "If-None-Match"), etag)
	if err != nil {
		return false, err
	}
	c.Header("ETag", etag)
	if !match {
		return false, nil
	}
	c.Status(http.StatusNotModified)
	c.Writer.WriteHeaderNow()
	return true, nil
}
