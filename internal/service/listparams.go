package service

import (
	"fmt"
	"math"
	"net/url"
	"strconv"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/apperr"
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

// sortFields maps the sort parameter to its column.
var sortFields = map[string]string{
	"created_at": item.FieldCreatedAt,
	"updated_at": item.FieldUpdatedAt,
	"name":       item.FieldName,
}

// ParseListParams reads and checks the query of GET /items. A parameter
// outside its bounds is a VALIDATION_ERROR naming it; absent ones take their
// defaults. A cursor must come from a list of the same sort and order, and
// page may then only be absent or 1.
func ParseListParams(q url.Values) (ListParams, error) {
	p := ListParams{Page: 1, Limit: DefaultPageSize, Sort: "created_at", Desc: true}
	var err error
	if p.Page, err = intParam(q, "page", 1, 1, MaxPage); err != nil {
		return p, err
	}
	if p.Limit, err = intParam(q, "limit", DefaultPageSize, 1, MaxPageSize); err != nil {
		return p, err
	}
	if v, ok := param(q, "status"); ok {
		if item.StatusValidator(item.Status(v)) != nil {
			return p, apperr.Validation("status", "must be one of: active, archived")
		}
		p.Status = v
	}
	if v, ok := param(q, "user_id"); ok {
		if !pulid.Valid("user_", v) {
			return p, apperr.Validation("user_id", "must be a user id (user_…)")
		}
		p.UserID = v
	}
	if v, ok := param(q, "sort"); ok {
		if _, known := sortFields[v]; !known {
			return p, apperr.Validation("sort", "must be one of: created_at, updated_at, name")
		}
		p.Sort = v
	}
	if v, ok := param(q, "order"); ok {
		switch v {
		case "asc":
			p.Desc = false
		case "desc":
			p.Desc = true
		default:
			return p, apperr.Validation("order", "must be asc or desc")
		}
	}
	if v, ok := param(q, "cursor"); ok {
		if p.Page != 1 {
			return p, apperr.Validation("cursor", "cannot be combined with page: a cursor says where the page starts")
		}
		if p.After, err = parseCursor(v, p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// param returns the value of a parameter given once; given twice with
// different values it is ambiguous, and the first one is what counts.
func param(q url.Values, name string) (string, bool) {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

func intParam(q url.Values, name string, def, min, max int) (int, error) {
	v, ok := param(q, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, apperr.Validation(name, fmt.Sprintf("must be a whole number from %d to %d", min, max))
	}
	return n, nil
}

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
