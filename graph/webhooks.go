package graph

import (
	"time"

	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/third_party/entgql"
)

// The webhooks, deliveries and events pages are REST's lists as Relay
// connections that page forwards (first, after). Their cursors are entgql's
// (the Cursor scalar every connection of the schema takes), holding what
// the service resumes from: for webhooks and deliveries the row's
// created_at and id (service.Keyset), for events the event id, which is
// REST's cursor of GET /v1/events.

// CursorError is the VALIDATION_ERROR of a cursor argument (name) this API
// did not issue, or issued for another connection.
func CursorError(name string) *apperr.Error {
	return apperr.Validation(name, "is not a cursor of this connection: pass pageInfo.endCursor or startCursor as it was returned")
}

// keysetPage reads first and after of a webhooks or deliveries page; prefix
// is the id prefix of the rows its cursors name.
func keysetPage(after *entgql.Cursor[string], first *int, prefix string) (service.PageParams, error) {
	first, _, err := pageBounds(first, nil)
	if err != nil {
		return service.PageParams{}, err
	}
	p := service.PageParams{Page: 1, Limit: *first}
	if after == nil {
		return p, nil
	}
	at, ok := after.Value.(time.Time)
	if !ok || at.IsZero() || !pulid.Valid(prefix, after.ID) {
		return p, CursorError("after")
	}
	p.After = &service.Keyset{CreatedAt: at.UTC(), ID: after.ID}
	return p, nil
}

// keysetCursor is the cursor of a row of a webhooks or deliveries page.
func keysetCursor(createdAt time.Time, id string) entgql.Cursor[string] {
	return entgql.Cursor[string]{ID: id, Value: createdAt.UTC()}
}

// forwardPageInfo is the page info of a page read forwards from the
// cursors of its edges: more says whether rows follow it, after whether it
// started after a cursor (so that rows come before it), as entgql's pages
// say.
func forwardPageInfo(cursors []entgql.Cursor[string], more, after bool) *entgql.PageInfo[string] {
	info := &entgql.PageInfo[string]{HasNextPage: more, HasPreviousPage: after}
	if n := len(cursors); n > 0 {
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[n-1]
	}
	return info
}

// eventTypeName is the GraphQL name of an event type of the outbox
// (item.created is CREATED).
func eventTypeName(t string) model.ItemEventType {
	for k, v := range itemEventTypes {
		if v == t {
			return k
		}
	}
	return model.ItemEventType(t) // none is stored that is not in the map
}

// eventTypeNames is eventTypeName of each.
func eventTypeNames(types []string) []model.ItemEventType {
	out := make([]model.ItemEventType, len(types))
	for i, t := range types {
		out[i] = eventTypeName(t)
	}
	return out
}

// eventTypeValues are the outbox's types of GraphQL's names, nil for nil.
func eventTypeValues(names []model.ItemEventType) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = itemEventTypes[n]
	}
	return out
}

// setEvents copies the events of CreateWebhookInput or UpdateWebhookInput,
// both bound to service.WebhookInput, into the service's types: the service
// checks them as it checks REST's. A null list leaves them absent; an empty
// one is every type, as on REST.
func setEvents(in *service.WebhookInput, names []model.ItemEventType) {
	if names != nil {
		types := eventTypeValues(names)
		in.Events = &types
	}
}
