package graph

import (
	"fmt"

	"github.com/acme/itemsvc/third_party/entgql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
)

// Page sizes of the connections, as REST's limit: a connection asked for
// without first or last returns the first defaultPageSize nodes, and no
// page is larger than maxPageSize, so that neither the database nor the
// complexity estimate meets an unbounded list.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// defaultItemOrder lists items newest first, as REST does by default; it is
// also the order the (user_id, created_at, id) index serves, where ent's own
// default (by id) would sort a user's items on every page.
var defaultItemOrder = &ent.ItemOrder{Direction: entgql.OrderDirectionDesc, Field: ent.ItemOrderFieldCreatedAt}

// pageBounds checks first and last and applies the default page size.
func pageBounds(first, last *int) (*int, *int, error) {
	for _, a := range []struct {
		name string
		v    *int
	}{{"first", first}, {"last", last}} {
		if a.v != nil && (*a.v < 0 || *a.v > maxPageSize) {
			return nil, nil, apperr.Validation(a.name, fmt.Sprintf("must be between 0 and %d", maxPageSize))
		}
	}
	if first == nil && last == nil {
		n := defaultPageSize
		first = &n
	}
	return first, last, nil
}

// pageSize is the number of nodes a connection field may return, for the
// complexity estimate.
func pageSize(first, last *int) int {
	switch {
	case first != nil && *first >= 0:
		return min(*first, maxPageSize)
	case last != nil && *last >= 0:
		return min(*last, maxPageSize)
	}
	return defaultPageSize
}
