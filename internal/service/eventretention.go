package service

import (
	"context"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/internal/apperr"
)

// CheckEventCursor refuses an event cursor (a well-formed evt_ id, named
// by field) made before the history kept, whether or not its event still
// exists: events after it may have been pruned, and resuming from it would
// skip them without a word. The check is on the id alone, before the
// cursor is resolved to a position in the feed; a caller without a viewer
// is refused first, as any read of the feed is.
func (s *Service) CheckEventCursor(ctx context.Context, field, id string) error {
	if _, err := requireViewer(ctx); err != nil {
		return err
	}
	if w := s.opts.EventWindow; w.Expired(id) {
		return apperr.CursorExpired(field, w.Retention)
	}
	return nil
}

// withinWindow keeps a feed's query to the history kept: an older event
// that stays only because a webhook endpoint is still owed it is not part
// of the feed, whose cursors from before it are expired anyway.
func (s *Service) withinWindow(q *ent.EventQuery) {
	if w := s.opts.EventWindow; w.On() {
		q.Where(event.IDGTE(w.StartID()))
	}
}
