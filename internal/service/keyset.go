package service

import (
	"time"
)

// PageParams select one page of a list kept newest first (created_at, then
// id, both descending): Limit rows from the page numbered Page (REST's page
// and limit), or, when After is set, from the row after it (GraphQL's
// first and after). A page by number shifts when rows are added before it;
// one after a row does not.
type PageParams struct {
	Page, Limit int
	After       *Keyset
}

// Keyset is a row's place in a list kept newest first: its created_at and
// id. The page after it starts with the next older row, whatever was added
// or removed meanwhile, the row itself included.
type Keyset struct {
	CreatedAt time.Time
	ID        string
}

// offset is the number of rows before the page p names by number.
func (p PageParams) offset() int {
	return max(p.Page-1, 0) * p.Limit
}

// cut keeps the first limit rows of a page read one row longer, and
// reports whether there was that one more.
func cut[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}
