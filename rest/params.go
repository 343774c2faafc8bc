package rest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// The query strings of REST's lists, read into the service's typed
// parameters. A parameter outside its bounds is a VALIDATION_ERROR naming
// it; absent ones take their defaults (the service's page bounds). REST's
// parameters are named as the service names the fields they fill, so the
// service's own errors about them need no renaming.

// parseListParams reads the query of GET /items. A cursor must come from a
// list of the same sort and order, and page may then only be absent or 1.
func parseListParams(q url.Values) (service.ListParams, error) {
	p := service.ListParams{Page: 1, Limit: service.DefaultPageSize, Sort: "created_at", Desc: true}
	var err error
	if p.Page, p.Limit, err = parsePageParams(q); err != nil {
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
		if !slices.Contains(service.ItemSorts, v) {
			return p, apperr.Validation("sort", "must be one of: "+strings.Join(service.ItemSorts, ", "))
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
		if p.After, err = service.DecodeItemCursor(v); err != nil {
			return p, badCursor()
		}
		if c := p.After; c.Sort != p.Sort || c.Desc != p.Desc {
			return p, apperr.Validation("cursor", fmt.Sprintf(
				"was made for sort=%s&order=%s: a cursor continues the order it came from; start again without it to change the order",
				c.Sort, orderName(c.Desc)))
		}
	}
	return p, nil
}

func orderName(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}

// badCursor is the one answer to a cursor this API did not issue, or issued
// for another list.
func badCursor() error {
	return apperr.Validation("cursor", "is not a cursor of this list: pass meta.pagination.next_cursor as it was returned")
}

// parsePageParams reads page and limit of a list by page number.
func parsePageParams(q url.Values) (page, limit int, err error) {
	if page, err = intParam(q, "page", 1, 1, service.MaxPage); err != nil {
		return 0, 0, err
	}
	if limit, err = parseLimit(q); err != nil {
		return 0, 0, err
	}
	return page, limit, nil
}

// parseLimit reads the page size of a list.
func parseLimit(q url.Values) (int, error) {
	return intParam(q, "limit", service.DefaultPageSize, 1, service.MaxPageSize)
}

// parseKeyset reads the cursor of a list kept newest first whose rows' ids
// have prefix; nil when absent.
func parseKeyset(q url.Values, prefix string) (*service.Keyset, error) {
	v, ok := param(q, "cursor")
	if !ok {
		return nil, nil
	}
	k, err := service.DecodeKeyset(prefix, v)
	if err != nil {
		return nil, badCursor()
	}
	return k, nil
}

// parseUserFilter reads the filters of GET /v1/users: role (user or
// admin), disabled (true or false) and email (a prefix, any case).
func parseUserFilter(q url.Values) (service.UserFilter, error) {
	var f service.UserFilter
	f.Role, _ = param(q, "role")
	f.EmailPrefix, _ = param(q, "email")
	if v, ok := param(q, "disabled"); ok {
		d, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return f, apperr.Validation("disabled", "must be true or false")
		}
		f.Disabled = &d
	}
	return f, f.Check()
}

// parseKeyListParams reads the query of GET /keys: user_id, cursor (a
// next_cursor of this list) and limit.
func parseKeyListParams(q url.Values) (service.KeyListParams, error) {
	var p service.KeyListParams
	var err error
	if p.Limit, err = parseLimit(q); err != nil {
		return p, err
	}
	p.UserID, _ = param(q, "user_id")
	if p.After, err = parseKeyset(q, "key_"); err != nil {
		return p, err
	}
	return p, nil
}

// parseAuditParams reads the query of GET /v1/audit: limit, cursor,
// actor_id and action.
func parseAuditParams(q url.Values) (service.AuditParams, error) {
	var p service.AuditParams
	var err error
	if p.Limit, err = parseLimit(q); err != nil {
		return p, err
	}
	if p.After, err = parseKeyset(q, "aud_"); err != nil {
		return p, err
	}
	if v, ok := param(q, "actor_id"); ok {
		if err := service.CheckAuditActor(v); err != nil {
			return p, err
		}
		p.ActorID = v
	}
	if v, ok := param(q, "action"); ok {
		if p.Action, err = service.ParseAuditAction(v); err != nil {
			return p, err
		}
	}
	return p, nil
}

// parseEventListParams reads the query of GET /events: limit, type (a
// comma-separated list), after and cursor (event ids, which the service
// resolves to places in the feed once both are well-formed).
func parseEventListParams(ctx context.Context, svc *service.Service, q url.Values) (service.EventListParams, error) {
	var p service.EventListParams
	var err error
	if p.Limit, err = parseLimit(q); err != nil {
		return p, err
	}
	if v, ok := param(q, "type"); ok {
		if p.Types, err = service.ParseEventTypes("type", strings.Split(v, ",")); err != nil {
			return p, err
		}
	}
	cursors := []struct {
		name string
		dst  **service.EventCursor
	}{{"after", &p.After}, {"cursor", &p.Before}}
	expired := func(field, id string) error { return svc.CheckEventCursor(ctx, field, id) }
	for _, check := range []func(field, id string) error{service.CheckEventID, expired} {
		for _, c := range cursors {
			if v, ok := param(q, c.name); ok {
				if err := check(c.name, v); err != nil {
					return p, err
				}
			}
		}
	}
	for _, c := range cursors {
		if v, ok := param(q, c.name); ok {
			if *c.dst, err = svc.EventCursor(ctx, c.name, v); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// parseDeliveryParams reads the query of a delivery log: page, limit, state.
func parseDeliveryParams(q url.Values) (service.DeliveryParams, error) {
	var p service.DeliveryParams
	var err error
	if p.Page, p.Limit, err = parsePageParams(q); err != nil {
		return p, err
	}
	if v, ok := param(q, "state"); ok {
		if delivery.StateValidator(delivery.State(v)) != nil {
			return p, apperr.Validation("state", "must be one of: pending, succeeded, failed")
		}
		p.State = v
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

// intParam reads a whole number from min to max, def when absent.
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
