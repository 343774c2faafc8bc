package retention

import (
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// TestWindowExpired: an event id is expired when the millisecond in its
// ULID is before the window's start, and never with no retention; ids that
// are not event ids are left to the caller's own checks.
func TestWindowExpired(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	w := Window{Retention: time.Hour, Now: func() time.Time { return now }}
	at := func(t time.Time) string {
		u := ulid.MustNew(ulid.Timestamp(t), strings.NewReader(strings.Repeat("\xff", 16)))
		return "evt_" + strings.ToLower(u.String())
	}
	tests := []struct {
		name string
		w    Window
		id   string
		want bool
	}{
		{"a millisecond before the start", w, at(now.Add(-time.Hour - time.Millisecond)), true},
		{"at the start", w, at(now.Add(-time.Hour)), false},
		{"recent", w, at(now), false},
		{"long ago", w, "evt_" + strings.Repeat("0", 26), true},
		{"no retention", Window{}, at(now.Add(-1000 * time.Hour)), false},
		{"not an event id", w, "item_" + strings.Repeat("0", 26), false},
		{"malformed", w, "evt_x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.Expired(tt.id); got != tt.want {
				t.Errorf("Expired(%s) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
	// StartID sorts between the ids just before and at the start.
	if s := w.StartID(); !(at(now.Add(-time.Hour-time.Millisecond)) < s && s <= at(now.Add(-time.Hour))) {
		t.Errorf("StartID %s does not sort at the start", s)
	}
}
