package graph

import (
	"fmt"

	"github.com/acme/itemsvc/third_party/entgql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// The page sizes of the connections are the service's, as REST's limit is:
// a connection asked for without first or last returns the first
// service.DefaultPageSize nodes, and no page is larger than
// service.MaxPageSize. The server (graph/server) checks and defaults every
// connection's page before the operation runs; the resolvers hold to the
// same bounds.

// pageReason is what first and last must be, in REST's words for limit.
var pageReason = fmt.Sprintf("must be a whole number from 0 to %d", service.MaxPageSize)

// PageSizeError is the VALIDATION_ERROR of a first or last (name) outside
// 0 to service.MaxPageSize.
func PageSizeError(name string) *apperr.Error {
	return apperr.Validation(name, pageReason)
}

// defaultItemOrder lists items newest first, as REST does by default; it is
// also the order the (user_id, created_at, id) index serves, where ent's own
// default (by id) would sort a user's items on every page.
var defaultItemOrder = &ent.ItemOrder{Direction: entgql.OrderDirectionDesc, Field: ent.ItemOrderFieldCreatedAt}

// pageBounds checks first and last and applies the default page size. The
// server's pricer has refused an operation with a bad first or last before
// it ran; this keeps a resolver called otherwise (a test, a future caller)
// bounded.
func pageBounds(first, last *int) (*int, *int, error) {
	for _, a := range []struct {
		name string
		v    *int
	}{{"first", first}, {"last", last}} {
		if a.v != nil && (*a.v < 0 || *a.v > service.MaxPageSize) {
			return nil, nil, PageSizeError(a.name)
		}
	}
	if first == nil && last == nil {
		n := service.DefaultPageSize
		first = &n
	}
	return first, last, nil
}
