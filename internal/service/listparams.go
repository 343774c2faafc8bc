package service

import (
	"math"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent/item"
)

// Page bounds of every list, on both APIs (DESIGN §3), set here only: REST's
// limit and GraphQL's first and last default to DefaultPageSize and go up
// to MaxPageSize, so that neither the database nor GraphQL's cost estimate
// meets an unbounded list; REST's page numbers go up to MaxPage.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxPage         = math.MaxInt32
)

// ListParams select one page of items.
type ListParams struct {
	Page, Limit int
	Status      string // "" for any
	UserID      string // "" for any the viewer may see
	Sort        string // created_at, updated_at or name
	Desc        bool
	// After, when set, starts the page after this position instead of at
	// an offset (the cursor parameter); Page is then 1.
	After *ItemCursor
}

// sortFields maps each of ItemSorts to its column.
var sortFields = map[string]string{
	"created_at": item.FieldCreatedAt,
	"updated_at": item.FieldUpdatedAt,
	"name":       item.FieldName,
}

// ItemSorts are the fields a list of items may be sorted by (ListParams.Sort).
var ItemSorts = []string{"created_at", "updated_at", "name"}

// order sorts by the chosen field, then by id in the same direction, so that
// equal values page stably and pages never overlap.
func (p ListParams) order() []item.OrderOption {
	dir := sql.OrderAsc()
	if p.Desc {
		dir = sql.OrderDesc()
	}
	field := sortFields[p.Sort]
	if field == "" {
		field = item.FieldCreatedAt
	}
	return []item.OrderOption{
		sql.OrderByField(field, dir).ToFunc(),
		item.ByID(dir),
	}
}

// Pages is the number of pages of total items at limit per page.
func Pages(total, limit int) int {
	if limit <= 0 {
		return 0
	}
	return (total + limit - 1) / limit
}
