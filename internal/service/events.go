package service

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/schema"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/events"
)

// EventTypes are the types of item events, in the order the docs list them.
var EventTypes = []string{schema.EventItemCreated, schema.EventItemUpdated, schema.EventItemDeleted}

// EventListParams select one page of the event feed, newest first.
type EventListParams struct {
	Types []string // empty: all
	// After keeps the events committed after this one: what a client
	// missed since it last looked.
	After *EventCursor
	// Before is the page cursor: the events committed before this one.
	Before *EventCursor
	Limit  int
}

// EventCursor is an event the viewer may see, as a place in the feed that
// a page starts after or before. The transport that reads a request's
// event ids resolves each with Service.EventCursor.
type EventCursor struct {
	pos events.Position
}

// EventCursor resolves the event id a request names in field, the
// request's own name for it (REST's after and cursor are GraphQL's since
// and after: each transport names its argument, as it does to CheckEventID).
// An id that is no event id, or names no event the viewer may see, is
// VALIDATION_ERROR; one older than the history kept CURSOR_EXPIRED, even if
// its event is still there. A transport reading two ids checks both
// (CheckEventID, then CheckEventCursor) before it resolves either, so that
// which error a request with two bad ids gets does not depend on the order
// it resolves them in.
func (s *Service) EventCursor(ctx context.Context, field, id string) (*EventCursor, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	if err := CheckEventID(field, id); err != nil {
		return nil, err
	}
	if err := s.CheckEventCursor(ctx, field, id); err != nil {
		return nil, err
	}
	pos, err := s.eventPosition(ctx, field, id)
	if err != nil {
		return nil, err
	}
	return &EventCursor{pos: pos}, nil
}

// CheckEventID refuses, naming field, a cursor that is not an event id.
func CheckEventID(field, id string) error {
	if !pulid.Valid("evt_", id) {
		return apperr.Validation(field, "must be an event id (evt_…)")
	}
	return nil
}

// ParseEventTypes checks a list of event types named by field.
func ParseEventTypes(field string, types []string) ([]string, error) {
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return nil, apperr.Validation(field, "must be one or more of: "+strings.Join(EventTypes, ", "))
		}
	}
	return types, nil
}

// EventPage is one page of events, newest first; Next is the cursor of the
// next (older) page, "" on the last. More reports events after the page
// (with a Limit of 0, the one case where Next stays "").
type EventPage struct {
	Events []events.Event
	Next   string
	More   bool
}

// ListEvents returns the events the viewer may see (the Event policy: their
// items', deleted ones included; an admin all), newest first in commit order.
func (s *Service) ListEvents(ctx context.Context, p EventListParams) (EventPage, error) {
	if _, err := requireViewer(ctx); err != nil {
		return EventPage{}, err
	}
	q := s.db.Event.Query().Where(events.Published()).Order(events.Descending...).Limit(p.Limit + 1)
	if len(p.Types) > 0 {
		q.Where(event.TypeIn(p.Types...))
	}
	s.withinWindow(q)
	if p.After != nil {
		q.Where(events.After(p.After.pos))
	}
	if p.Before != nil {
		q.Where(events.Before(p.Before.pos))
	}
	rows, err := q.All(ctx)
	if err != nil {
		return EventPage{}, err
	}
	var page EventPage
	if rows, page.More = cut(rows, p.Limit); page.More && len(rows) > 0 {
		page.Next = rows[len(rows)-1].ID
	}
	page.Events = make([]events.Event, len(rows))
	for i, r := range rows {
		page.Events[i] = events.FromRow(r)
	}
	return page, nil
}

// GetEvent returns one event the viewer may see, or NOT_FOUND.
func (s *Service) GetEvent(ctx context.Context, id string) (events.Event, error) {
	if _, err := requireViewer(ctx); err != nil {
		return events.Event{}, err
	}
	if !pulid.Valid("evt_", id) {
		return events.Event{}, apperr.NotFound("event")
	}
	r, err := s.db.Event.Get(ctx, id)
	if err != nil {
		return events.Event{}, err
	}
	return events.FromRow(r), nil
}

// eventPosition is the position in the feeds' order of an event the viewer
// may see, named by field; an unknown one (or another user's) is a
// VALIDATION_ERROR: the cursor is wrong, not the resource.
func (s *Service) eventPosition(ctx context.Context, field, id string) (events.Position, error) {
	r, err := s.db.Event.Query().Where(event.ID(id)).Select(event.FieldXid, event.FieldSeq).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return events.Position{}, apperr.Validation(field, "is not an event of yours (it may be older than the retention)")
	case err != nil:
		return events.Position{}, err
	}
	return events.PositionOf(r), nil
}

// StreamParams open an event stream.
type StreamParams struct {
	Types []string
	// After is the id of the last event the client got (Last-Event-ID,
	// the after argument): the stream starts with every later one it may
	// see. Empty: from now on.
	After string
	// Token is the access token the stream was opened with: it must hold
	// now (unexpired, its key unrevoked, its user enabled), is checked
	// again every Options.StreamRecheck, at its expiry and at once when
	// its key or user changes on this server, and the stream ends with
	// TOKEN_EXPIRED or UNAUTHORIZED when it no longer holds. Each check's
	// viewer is the one the stream delivers for from then on: a user
	// demoted from admin gets their own items' events only.
	Token string
}

// Stream is an open event stream.
type Stream struct {
	*events.Subscription
	svc   *Service
	token string
	check *time.Timer
	exp   time.Time
}

// SubscribeEvents opens a stream of the events the viewer may see. The
// caller must Close it.
func (s *Service) SubscribeEvents(ctx context.Context, p StreamParams) (*Stream, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	var err error
	if s.opts.Events == nil {
		return nil, apperr.Unavailable(nil)
	}
	f := events.Filter{Types: p.Types}
	if p.After != "" {
		if !pulid.Valid("evt_", p.After) {
			return nil, apperr.Validation("after", "must be an event id (evt_…)")
		}
		if err := s.CheckEventCursor(ctx, "after", p.After); err != nil {
			return nil, err
		}
		if f.After, err = s.eventPosition(ctx, "after", p.After); err != nil {
			return nil, err
		}
	}
	// The viewer may have been authenticated long ago (a WebSocket's
	// upgrade or connection_init): the token must still hold, by REST's
	// rule, and the stream runs as the viewer it stands for now.
	v, err := s.Authenticate(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	claims, err := s.tokens.Parse(p.Token)
	if err != nil {
		return nil, apperr.Unauthorized("the access token is invalid")
	}
	sub, err := s.opts.Events.Subscribe(ctx, v, f)
	if err != nil {
		return nil, err
	}
	st := &Stream{Subscription: sub, svc: s, token: p.Token, exp: claims.ExpiresAt}
	st.check = time.NewTimer(st.untilCheck())
	return st, nil
}

// untilCheck is the time to the next check: StreamRecheck, or the token's
// expiry if sooner.
func (st *Stream) untilCheck() time.Duration {
	d := st.svc.opts.StreamRecheck
	if left := time.Until(st.exp); left < d {
		d = max(left, 0)
	}
	return d
}

// Next returns the next event, or why the stream ends: the hub's reason
// (SLOW_CONSUMER, shutdown), a token that expired or a key revoked since.
func (st *Stream) Next(ctx context.Context) (events.Event, error) {
	return st.NextOrIdle(ctx, nil)
}

// NextOrIdle is Next that returns events.ErrIdle when idle fires first.
func (st *Stream) NextOrIdle(ctx context.Context, idle <-chan time.Time) (events.Event, error) {
	for {
		ev, err := st.Subscription.NextOrCheck(ctx, st.check.C, idle)
		if !errors.Is(err, events.ErrCheck) {
			return ev, err
		}
		v, err := st.svc.authenticate(ctx, st.token, st.svc.opts.StreamRecheck)
		if err != nil {
			return events.Event{}, err
		}
		st.Reauthorize(v)
		st.check.Reset(st.untilCheck())
	}
}

// Close ends the stream.
func (st *Stream) Close() {
	st.check.Stop()
	st.Subscription.Close()
}
