package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/internal/viewer"
)

// Event is one item change as feeds show it.
type Event struct {
	// ID is the public id (evt_…), the one webhooks carry; it is also the
	// cursor a client resumes after.
	ID string
	// Xid and Seq are the event's position in the feeds' order (order.go),
	// what resuming compares.
	Xid, Seq  int64
	Type      string
	UserID    string
	ItemID    string
	Timestamp time.Time
	// Item is the item as the change left it (as it was, for item.deleted),
	// in the API's JSON.
	Item json.RawMessage
	// Frame is the event as one Server-Sent Events frame, rendered once by
	// the tailer for all the streams it reaches; nil on replayed events.
	Frame []byte
}

// Body is the event's JSON: the body of its webhook deliveries.
type Body struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Timestamp time.Time       `json:"timestamp"`
}

// Body returns the event's JSON body.
func (ev Event) Body() Body {
	return Body{ID: ev.ID, Event: ev.Type, Data: ev.Item, Timestamp: ev.Timestamp.UTC()}
}

// SSEFrame renders the event as a Server-Sent Events frame: its id (the
// cursor Last-Event-ID resumes after), its type as the event name, its body
// as the data. A live event's frame is the one the tailer rendered once for
// every stream it reaches.
func (ev Event) SSEFrame() ([]byte, error) {
	if ev.Frame != nil {
		return ev.Frame, nil
	}
	body, err := json.Marshal(ev.Body())
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	b := make([]byte, 0, len(body)+len(ev.ID)+len(ev.Type)+24)
	b = append(b, "id: "...)
	b = append(b, ev.ID...)
	b = append(b, "\nevent: "...)
	b = append(b, ev.Type...)
	b = append(b, "\ndata: "...)
	b = append(b, body...)
	b = append(b, "\n\n"...)
	return b, nil
}

// FromRow is the feed's view of an outbox row.
func FromRow(r *ent.Event) Event {
	return Event{
		ID:        r.ID,
		Xid:       r.Xid,
		Seq:       r.Seq,
		Type:      r.Type,
		UserID:    r.UserID,
		ItemID:    r.ItemID,
		Timestamp: r.CreatedAt,
		Item:      json.RawMessage(r.Data),
	}
}

// Filter selects the events of a subscription or a page.
type Filter struct {
	// Types keeps these types only; empty is all.
	Types []string
	// After is the position of the last event the client has; zero is
	// "from now on" for a subscription.
	After Position
}

// replayPage is how many events one replay read takes.
const replayPage = 200

// Subscription is one client's stream. Next, TryNext and Linger are called
// from one goroutine, the stream's writer.
type Subscription struct {
	hub *Hub
	// viewer is who opened the stream: its user and key never change. Its
	// role does (a demotion, a promotion): admin is the role as the
	// latest check of the stream's credential found it, which the tailer
	// reads when it fans an event out and the writer again when it hands
	// one out, so that an event queued before a demotion is not delivered
	// after it.
	viewer viewer.Viewer
	admin  atomic.Bool
	types  []string
	// checkDue is set by the hub (Recheck) when the stream's credential
	// changed on this server: the writer hands out nothing more until its
	// owner has checked the credential again (NextOrCheck returns
	// ErrCheck); recheck wakes a writer waiting for events.
	checkDue atomic.Bool
	recheck  chan struct{}

	// mu guards queue: the live events the tailer handed over (once
	// registered) and the writer has not taken yet. The tailer appends a
	// whole read's events, then signals ready once: a writer wakes once
	// per read of the outbox, not once per event. The events are shared
	// by every stream they reach, so a stream's queue holds pointers only.
	mu    sync.Mutex
	queue []*Event
	ready chan struct{}
	// batch is the queue as the writer last took it, handed out from next
	// on; its array becomes the queue's again on the next take, so a
	// stream that keeps up allocates nothing per event.
	batch []*Event
	next  int
	// lastTake is when the writer last took a batch (Linger).
	lastTake time.Time
	linger   *time.Timer
	// signalled: the tailer's current read already queued for this stream
	// (guarded by the hub's mu).
	signalled bool

	// pos is the position of the last event handed to the client.
	pos        Position
	pending    []Event
	registered bool
	caughtUp   bool

	closeOnce sync.Once
	endOnce   sync.Once
	ended     chan struct{}
	err       error
}

// Subscribe opens a stream of the events v may see, from after f.After (or
// from now on when it is 0). The caller must Close it.
func (h *Hub) Subscribe(ctx context.Context, v viewer.Viewer, f Filter) (*Subscription, error) {
	s := &Subscription{
		hub:     h,
		viewer:  v,
		types:   f.Types,
		ready:   make(chan struct{}, 1),
		recheck: make(chan struct{}, 1),
		pos:     f.After,
		ended:   make(chan struct{}),
	}
	s.admin.Store(v.Admin())
	if err := h.admit(s); err != nil {
		return nil, err
	}
	if f.After.IsZero() {
		// From now on: nothing to replay.
		last, err := h.register(ctx, s)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.pos, s.registered, s.caughtUp = last, true, true
	}
	return s, nil
}

// Close ends the stream and frees its place; closing it again does
// nothing (its key's count is given back once).
func (s *Subscription) Close() {
	s.closeOnce.Do(func() { s.hub.release(s) })
}

// end stops the stream with err (nil: closed by its owner).
func (s *Subscription) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		close(s.ended)
	})
}

// Ended is closed when the hub ends the stream (a slow consumer, a server
// stopping); Err says why.
func (s *Subscription) Ended() <-chan struct{} { return s.ended }

// Err is why the hub ended the stream.
func (s *Subscription) Err() error { return s.err }

// wants reports whether s gets ev: of a type it asked for and visible to its
// viewer.
func (s *Subscription) wants(ev *Event) bool {
	if len(s.types) > 0 && !slices.Contains(s.types, ev.Type) {
		return false
	}
	return s.visible(ev)
}

// visible reports whether the stream's viewer may see ev now. Visibility is
// the Event policy's (ent/schema/event.go: an admin sees all, a user the
// events of their own items, deleted ones included), applied here to rows
// the tailer read once for all subscribers; replay reads through the policy
// itself.
func (s *Subscription) visible(ev *Event) bool {
	return ev.UserID == s.viewer.UserID || s.admin.Load()
}

// current is the stream's viewer with its role as last checked.
func (s *Subscription) current() viewer.Viewer {
	v := s.viewer
	v.Role = viewer.RoleUser
	if s.admin.Load() {
		v.Role = viewer.RoleAdmin
	}
	return v
}

// Reauthorize makes the stream deliver what v may see from now on: the
// viewer a check of the stream's credential found (its role may have
// changed since the stream opened). Events queued under the old role and
// no longer visible are skipped.
func (s *Subscription) Reauthorize(v viewer.Viewer) {
	s.hub.setAdmin(s, v.Admin())
}

// askCheck makes the writer check the stream's credential before it hands
// out another event (Recheck).
func (s *Subscription) askCheck() {
	s.checkDue.Store(true)
	select {
	case s.recheck <- struct{}{}:
	default:
	}
}

// ErrCheck is what NextOrCheck returns when its check channel fires, and
// ErrIdle when its idle channel does.
var (
	ErrCheck = errors.New("events: check due")
	ErrIdle  = errors.New("events: idle")
)

// Next returns the next event: first those missed since the cursor, read
// from the outbox, then live ones. It fails when ctx ends or the hub ended
// the stream (Err).
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	return s.NextOrCheck(ctx, nil, nil)
}

// TryNext returns the next event if one is at hand (replayed, or live and
// waiting), without blocking: a writer drains these before it flushes.
func (s *Subscription) TryNext() (Event, bool) {
	if s.checkDue.Load() {
		return Event{}, false
	}
	if ev, ok := s.popPending(); ok {
		return ev, true
	}
	if !s.caughtUp {
		return Event{}, false
	}
	return s.popLive()
}

// popLive takes the next live event past the position, from the batch the
// writer holds or else from a new take of the queue.
func (s *Subscription) popLive() (Event, bool) {
	for {
		for s.next < len(s.batch) {
			ev := s.batch[s.next]
			s.next++
			if s.visible(ev) && s.advance(*ev) {
				return *ev, true
			}
		}
		if !s.take() {
			return Event{}, false
		}
	}
}

// take swaps the queue for the batch the writer is done with, and reports
// whether it got any event.
func (s *Subscription) take() bool {
	done := s.batch
	clear(done) // the events are not held past their write
	if cap(done) > maxIdleQueue {
		done = nil // a burst's array is not held for the stream's life
	}
	s.mu.Lock()
	s.batch, s.queue = s.queue, done[:0]
	s.mu.Unlock()
	s.next = 0
	return len(s.batch) > 0
}

// maxIdleQueue is the largest queue array a stream keeps between bursts.
const maxIdleQueue = 64

// push queues a live event, and reports false (leaving it out) when
// Buffer events already wait: the stream is too slow. Called by the tailer.
func (s *Subscription) push(ev *Event, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) >= limit {
		return false
	}
	s.queue = append(s.queue, ev)
	return true
}

// signal wakes the writer if it waits for live events; one signal stands
// for any number of events queued before it.
func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Linger holds the writer, once it has an event to write, until the hub's
// FlushInterval has passed since it last took a batch, so that the events
// arriving meanwhile go out in the same write. A write is what fan-out
// costs (a syscall and the client's wake-up per stream, whatever it
// carries): a stream of events then costs one write per interval rather
// than one per event, while an event after a quiet spell goes out at once.
// Replayed events are not held: they are all at hand. It returns early
// when ctx ends or the hub ends the stream.
func (s *Subscription) Linger(ctx context.Context) {
	wait := s.hub.opts.FlushInterval - time.Since(s.lastTake)
	if wait > 0 && s.caughtUp && len(s.pending) == 0 {
		if s.linger == nil {
			s.linger = time.NewTimer(wait)
		} else {
			s.linger.Reset(wait)
		}
		select {
		case <-s.linger.C:
		case <-s.ended:
			s.linger.Stop()
		case <-ctx.Done():
			s.linger.Stop()
		}
	}
	s.lastTake = time.Now()
}

// popPending takes the next replayed event, if any.
func (s *Subscription) popPending() (Event, bool) {
	if len(s.pending) == 0 {
		return Event{}, false
	}
	ev := s.pending[0]
	s.pending = s.pending[1:]
	s.pos = ev.Position()
	return ev, true
}

// advance moves the subscription to a live event, unless it was replayed
// already (it is not past the position).
func (s *Subscription) advance(ev Event) bool {
	p := ev.Position()
	if !s.pos.Less(p) {
		return false
	}
	s.pos = p
	return true
}

// NextOrCheck is Next that also returns ErrCheck when check fires while it
// waits for a live event, or the hub asked for a check (Recheck), before
// it hands out another event (the caller checks the client's credentials
// again, and Reauthorize), and ErrIdle when idle fires (the caller sends
// a keep-alive).
func (s *Subscription) NextOrCheck(ctx context.Context, check, idle <-chan time.Time) (Event, error) {
	for {
		if s.checkDue.Swap(false) {
			return Event{}, ErrCheck
		}
		if ev, ok := s.popPending(); ok {
			return ev, nil
		}
		if !s.caughtUp {
			if err := s.replay(ctx); err != nil {
				return Event{}, err
			}
			continue
		}
		if ev, ok := s.popLive(); ok {
			return ev, nil
		}
		select {
		case <-s.ready:
		case <-s.recheck:
		case <-s.ended:
			if s.err == nil {
				return Event{}, context.Canceled
			}
			return Event{}, s.err
		case <-check:
			return Event{}, ErrCheck
		case <-idle:
			return Event{}, ErrIdle
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// replay reads the next page of published events after pos through the
// Event policy (ctx carries the viewer). Once a read comes back short, the
// subscription registers for live events and reads once more: the tailer
// had read every event up to where it registered, so they are all published
// and this last read finds them; later ones arrive live (seen ones are
// skipped by position).
func (s *Subscription) replay(ctx context.Context) error {
	q := s.hub.db.Event.Query().
		Where(After(s.pos), Published()).
		Order(Ascending...).
		Limit(replayPage)
	if len(s.types) > 0 {
		q.Where(event.TypeIn(s.types...))
	}
	qctx, cancel := context.WithTimeout(viewer.NewContext(ctx, s.current()), s.hub.opts.QueryTimeout)
	rows, err := q.All(qctx)
	cancel()
	if err != nil {
		return fmt.Errorf("replay events: %w", err)
	}
	for _, r := range rows {
		s.pending = append(s.pending, FromRow(r))
	}
	if len(rows) == replayPage {
		return nil
	}
	if !s.registered {
		if _, err := s.hub.register(ctx, s); err != nil {
			return err
		}
		s.registered = true
		return nil
	}
	if len(rows) == 0 {
		s.caughtUp = true
	}
	return nil
}
