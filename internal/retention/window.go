// Package retention bounds the event history (EVENT_RETENTION, DESIGN §7):
// a Pruner deletes old events with their finished webhook deliveries, in
// small batches, and a Window tells the event feeds which cursors point
// before the history kept (410 CURSOR_EXPIRED), so that a client never
// resumes across a gap without knowing it.
package retention

import (
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// eventPrefix is the prefix of event ids: evt_ and a lowercase ULID, whose
// first 48 bits are the millisecond the id was made. Ids therefore sort by
// time, which lets the window and the pruner cut the history by id, on the
// primary key, without an index on created_at.
const eventPrefix = "evt_"

// Window is the event history the feeds answer for: the last Retention on
// Now's clock. The zero Window keeps everything.
type Window struct {
	// Retention is EVENT_RETENTION; 0: no limit.
	Retention time.Duration
	// Now is the clock; nil: time.Now. Tests move it instead of waiting.
	Now func() time.Time
}

// On reports whether the window limits the history at all.
func (w Window) On() bool { return w.Retention > 0 }

// Start is the time of the oldest event the feeds still answer for.
func (w Window) Start() time.Time {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	return now().Add(-w.Retention)
}

// StartID is the smallest event id made at Start or later: the feeds list
// events from it on (ids of the same millisecond included).
func (w Window) StartID() string { return idAt(w.Start()) }

// Expired reports whether a well-formed event id was made before Start: as
// a cursor it may be followed by pruned events, so the client must start
// over. The id's own time decides, not whether the event still exists, so
// the answer is the same for a pruned event, for another user's (nothing
// is learnt about it) and for an event kept past the window because a
// webhook endpoint is still owed it.
func (w Window) Expired(id string) bool {
	if !w.On() {
		return false
	}
	t, ok := idTime(id)
	return ok && t < ulid.Timestamp(w.Start())
}

// idAt is the smallest event id whose ULID holds the millisecond of t.
func idAt(t time.Time) string {
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(t)) // fails only past the year 10889
	return eventPrefix + strings.ToLower(u.String())
}

// idTime is the millisecond an event id was made, as ULID time.
func idTime(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, eventPrefix)
	if !ok {
		return 0, false
	}
	u, err := ulid.ParseStrict(rest)
	if err != nil {
		return 0, false
	}
	return u.Time(), true
}
