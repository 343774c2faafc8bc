package rest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/httpapi"
)

// meta is carried by every response (shared with /graphql: internal/httpapi).
type meta = httpapi.Meta

// errorBody is the error of a failure envelope.
type errorBody = httpapi.ErrorBody

type pagination struct {
	// Page is absent on a page reached by cursor, whose number is not
	// known without counting everything before it.
	Page  int `json:"page,omitzero"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
	// NextCursor is given by lists that take a cursor (items), and there
	// always: null on the last page. Other lists leave it out.
	NextCursor nextCursor `json:"next_cursor,omitzero"`
}

// nextCursor is the next_cursor of a list that offers cursors: a string, or
// null when no page follows. Its zero value is a list without cursors.
type nextCursor struct {
	offered bool
	value   string // "" on the last page
}

// IsZero reports a list without cursors, whose next_cursor is left out.
func (n nextCursor) IsZero() bool { return !n.offered }

// MarshalJSON writes the cursor, or null on the last page.
func (n nextCursor) MarshalJSON() ([]byte, error) {
	if n.value == "" {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

type success struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
	Meta    meta `json:"meta"`
}

// newMeta is the meta of a response to c.
func newMeta(c *gin.Context) meta { return httpapi.NewMeta(c) }

// renderData writes the success envelope around data.
func renderData(c *gin.Context, status int, data any) {
	writeJSON(c, status, success{Success: true, Data: data, Meta: newMeta(c)})
}

// renderPage writes the success envelope of a list, with its pagination.
func renderPage(c *gin.Context, data any, p pagination) {
	m := newMeta(c)
	m.Pagination = &p
	writeJSON(c, http.StatusOK, success{Success: true, Data: data, Meta: m})
}

// renderError writes the failure envelope of any error (httpapi.Fail).
func renderError(c *gin.Context, err error) { httpapi.Fail(c, err) }

// writeJSON writes v as the response and ends the request.
func writeJSON(c *gin.Context, status int, v any) { httpapi.WriteJSON(c, status, v) }

// logger is the request's logger, carrying its request id.
func logger(c *gin.Context) *slog.Logger { return httpapi.Logger(c) }

// baseLogger is the router's logger, without request attributes.
func baseLogger(c *gin.Context) *slog.Logger { return httpapi.BaseLogger(c) }

// errorOf returns the first error rendered for the request, for the access log.
func errorOf(c *gin.Context) error {
	if len(c.Errors) == 0 {
		return nil
	}
	return errors.Unwrap(c.Errors[0]) // gin wraps it
}
