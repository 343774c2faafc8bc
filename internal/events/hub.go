// Package events serves the outbox as a live, resumable feed: one tailer per
// process reads new events once, in the feeds' order (order.go), and fans them
// out to the local subscribers; a subscriber that comes (back) with a cursor
// is first replayed what it missed from the outbox. Wake-ups come from local
// commits, from other replicas (PostgreSQL LISTEN/NOTIFY or Redis pub/sub,
// wake.go) and from a slow poll; the outbox is the source of truth.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/apperr"
)

// Options tune a Hub; zero values take the defaults.
type Options struct {
	// PollInterval is how often the outbox is read when nothing wakes the
	// tailer (a commit on a replica whose wake-up was lost). Default 1s.
	PollInterval time.Duration
	// Buffer is how many events wait for one subscriber; a subscriber
	// that lets more pile up is dropped with SLOW_CONSUMER (it resumes from
	// its last event). Default 2048: a stream's queue holds pointers to
	// events shared by all their streams, so a deep one costs little, and
	// a server busy with writes can fall behind for a second or two
	// without ending streams whose readers keep up.
	Buffer int
	// PerKey caps the open streams of one API key. Default 10.
	PerKey int
	// ReadGap is the shortest time between two reads of the outbox after
	// wake-ups: the commits of a busy server fold into one read (a read
	// per commit cost a large share of what the create itself did), whose
	// events then reach each stream together. Default 10ms; negative:
	// read at every wake-up.
	ReadGap time.Duration
	// FlushInterval is the shortest time between two writes to one
	// stream (Subscription.Linger): the flush deadline of a batch.
	// Default DefaultFlushInterval; negative: every batch is written as
	// soon as it is ready.
	FlushInterval time.Duration
	// QueryTimeout bounds each read of the outbox (REQUEST_TIMEOUT): a
	// stream outlives any request deadline, its queries do not. Default 5s.
	QueryTimeout time.Duration
	// Relay carries wake-ups to and from other replicas (wake.go); nil:
	// this process only (SQLite), other replicas' events found by the poll.
	Relay Relay
	// Logger receives the tailer's warnings. Default slog.Default().
	Logger *slog.Logger
	// Metrics receives the hub's series; nil: not exported.
	Metrics *vm.Set
	// Concurrent is set when writers commit side by side (PostgreSQL):
	// a committed event may be held back until older transactions end
	// (Published), and the tailer looks again soon instead of waiting
	// for a wake-up that a transaction ending without events never sends.
	Concurrent bool
}

// DefaultFlushInterval is Options.FlushInterval's default. A write to a
// stream costs the server a syscall on the socket and the client's wake-up
// whatever it carries; written one event at a time, the 100 streams that
// follow one user made each of their creates several times dearer. Spaced
// by this interval, a busy stream takes its events a few dozen to a write.
// Longer intervals buy little more and cost twice: latency (the realtime
// row's p50 grows with the interval) and, with a stream taking thousands of
// events a second, a queue that overflows its Buffer while it waits
// (SLOW_CONSUMER). An event after a quiet spell goes out at once.
// docs/development.md has the figures.
const DefaultFlushInterval = 20 * time.Millisecond

// batch is how many events one read of the outbox takes at most; never more
// than a stream's buffer, so that one read alone cannot overflow a stream
// that keeps up.
const batch = 500

// Hub is the event feed of one process.
type Hub struct {
	db      *ent.Client
	opts    Options
	log     *slog.Logger
	metrics *metrics
	wake    chan struct{}
	publish chan struct{}

	mu     sync.Mutex
	last   Position // the position the tailer has fanned out up to
	tailed bool     // last is known; false while no stream is registered
	// epoch counts the times last was learnt from the outbox's end: a read
	// the tailer started in an earlier epoch is stale.
	epoch uint64
	// stopped: Run has ended; new subscriptions are refused.
	stopped bool
	subs    map[*Subscription]struct{}
	// The audience of an event is the admins' streams and its owner's:
	// the tailer visits those only, not every stream open.
	admins map[*Subscription]struct{}
	owners map[string]map[*Subscription]struct{}
	perKey map[string]int
	// open are the streams admitted and not yet released, replaying or
	// live: those Recheck reaches.
	open map[*Subscription]struct{}
	// woken are the streams the current read queued events for, signalled
	// once at its end (reused from read to read).
	woken []*Subscription
}

// New returns a hub over client; Run tails the outbox.
func New(client *ent.Client, opts Options) *Hub {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 2048
	}
	if opts.PerKey <= 0 {
		opts.PerKey = 10
	}
	if opts.ReadGap == 0 {
		opts.ReadGap = 10 * time.Millisecond
	}
	if opts.FlushInterval == 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Hub{
		db:      client,
		opts:    opts,
		log:     opts.Logger.With("component", "events"),
		wake:    make(chan struct{}, 1),
		publish: make(chan struct{}, 1),
		subs:    map[*Subscription]struct{}{},
		admins:  map[*Subscription]struct{}{},
		owners:  map[string]map[*Subscription]struct{}{},
		perKey:  map[string]int{},
		open:    map[*Subscription]struct{}{},
	}
	h.metrics = newMetrics(opts.Metrics)
	return h
}

// Notify wakes the tailer (a commit happened, here or on another replica);
// it never blocks, and wake-ups that arrive while it reads fold into one.
func (h *Hub) Notify() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// system is the context of the tailer's reads: every user's events, past
// the Event policy; each subscriber gets only what it may see (sees).
func system(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}

// Run tails the outbox until ctx ends, then ends every subscription.
func (h *Hub) Run(ctx context.Context) {
	defer h.closeAll()
	if h.opts.Relay != nil {
		relayDone := make(chan struct{})
		go func() { defer close(relayDone); h.relay(ctx) }()
		defer func() { <-relayDone }()
	}
	poll := time.NewTimer(h.opts.PollInterval)
	defer poll.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	retry := heldBackRetry
	for ctx.Err() == nil {
		read := time.Now()
		heldBack, err := h.tail(ctx)
		if err != nil && ctx.Err() == nil {
			h.log.WarnContext(ctx, "read the outbox", "err", err)
		}
		if heldBack {
			// Committed events wait for an older transaction: look
			// again soon, then less often while it stays open.
			poll.Reset(retry)
			retry = min(2*retry, h.opts.PollInterval)
		} else {
			retry = heldBackRetry
			poll.Reset(h.opts.PollInterval)
		}
		select {
		case <-ctx.Done():
		case <-poll.C:
		case <-h.wake:
		}
		if wait := h.opts.ReadGap - time.Since(read); wait > 0 {
			gap.Reset(wait)
			select {
			case <-ctx.Done():
			case <-gap.C:
			}
		}
	}
}

// startLocked learns where the outbox ends: the tailer fans out what is
// written from then on; earlier events are replayed to who asks for them.
// Called with mu held, so that no stream registers in between.
func (h *Hub) startLocked(ctx context.Context) error {
	if h.tailed {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
	defer cancel()
	last, err := lastPosition(ctx, h.db)
	if err != nil {
		return err
	}
	h.last, h.tailed = last, true
	h.epoch++
	return nil
}

// heldBackRetry is how soon the tailer looks again at events held back by
// an older open transaction; it doubles up to PollInterval while they stay.
const heldBackRetry = 2 * time.Millisecond

// lastPosition is the position of the last published event of the outbox,
// zero when there is none: a position past an event still held back would
// skip the events that will be published before it.
func lastPosition(ctx context.Context, db *ent.Client) (Position, error) {
	ev, err := db.Event.Query().Where(Published()).Order(Descending...).Select(event.FieldXid, event.FieldSeq).First(system(ctx))
	switch {
	case ent.IsNotFound(err):
		return Position{}, nil
	case err != nil:
		return Position{}, fmt.Errorf("last event: %w", err)
	}
	return PositionOf(ev), nil
}

// tail reads the published events past the last one fanned out and hands
// each to the subscribers that may see it. Only this goroutine advances
// last, so reads never overlap; nothing is published before an event
// already published (Published), so nothing below last can still appear.
// heldBack reports committed events past last that are not published yet
// (Options.Concurrent).
//
// With no subscriber the tailer reads nothing: it would read every event
// only to hand it to no one (a server with no streams open read each write's
// event back, a visible share of a create's CPU). When the last stream closes the
// hub forgets where the outbox ends (removeLocked), and the next stream to
// register learns it again (startLocked), as the first one after a start
// does; a read begun before that is dropped (epoch), so that a stream "from
// now" never gets the events written while none was open.
func (h *Hub) tail(ctx context.Context) (heldBack bool, err error) {
	limit := min(batch, h.opts.Buffer)
	for {
		h.mu.Lock()
		if len(h.subs) == 0 { // removeLocked forgot the position
			h.mu.Unlock()
			return false, nil
		}
		from, epoch := h.last, h.epoch
		h.mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
		rows, err := h.db.Event.Query().
			Where(After(from), Published()).
			Order(Ascending...).
			Limit(limit).
			All(system(qctx))
		cancel()
		if err != nil {
			return false, fmt.Errorf("tail events: %w", err)
		}
		now := time.Now()
		h.mu.Lock()
		if h.epoch != epoch {
			// Every stream closed while the read ran, and the next to open
			// learnt the outbox's end anew: these rows came before it.
			h.mu.Unlock()
			continue
		}
		for _, r := range rows {
			ev := new(FromRow(r)) // one for every stream it reaches
			if frame, err := ev.SSEFrame(); err == nil {
				ev.Frame = frame
			}
			for s := range h.admins {
				h.deliver(s, ev)
			}
			for s := range h.owners[ev.UserID] {
				h.deliver(s, ev)
			}
			h.metrics.fanout.Update(now.Sub(ev.Timestamp).Seconds())
			h.last = ev.Position()
		}
		// One wake-up per stream for the whole read: its writer then takes
		// all of it at once.
		for i, s := range h.woken {
			s.signalled = false
			s.signal()
			h.woken[i] = nil
		}
		h.woken = h.woken[:0]
		last := h.last
		h.mu.Unlock()
		if len(rows) < limit {
			return h.heldBack(ctx, last)
		}
	}
}

// heldBack reports whether events past last are committed but not yet
// published (Published): only with Options.Concurrent, where writers commit
// side by side.
func (h *Hub) heldBack(ctx context.Context, last Position) (bool, error) {
	if !h.opts.Concurrent {
		return false, nil
	}
	qctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
	defer cancel()
	found, err := h.db.Event.Query().Where(After(last)).Exist(system(qctx))
	if err != nil {
		return false, fmt.Errorf("look for held-back events: %w", err)
	}
	return found, nil
}

// deliver queues ev for s if s wants it, or drops s when its buffer is
// full: holding events without bound for a reader that does not read would
// let one slow client grow the server's memory. Called with mu held.
func (h *Hub) deliver(s *Subscription, ev *Event) {
	if !s.wants(ev) {
		return
	}
	if !s.push(ev, h.opts.Buffer) {
		h.metrics.dropped.Inc()
		h.removeLocked(s, errSlow)
		return
	}
	if !s.signalled {
		s.signalled = true
		h.woken = append(h.woken, s)
	}
}

// errSlow ends a subscription whose buffer overflowed; the client resumes
// from the last event it got.
var errSlow = apperr.New(apperr.CodeSlowConsumer, "the stream fell too far behind and was closed; reconnect with the id of the last event received to resume")

// ErrShutdown ends the subscriptions of a server that stops.
var ErrShutdown = apperr.New(apperr.CodeUnavailable, "the server is shutting down; reconnect with the id of the last event received to resume")

// register adds s to the fan-out and returns the position from which it
// will get events live: everything after it, and nothing at or below it
// that it has not replayed.
func (h *Hub) register(ctx context.Context, s *Subscription) (Position, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return Position{}, ErrShutdown
	}
	if err := h.startLocked(ctx); err != nil {
		return Position{}, err
	}
	h.subs[s] = struct{}{}
	h.indexLocked(s)
	h.metrics.subscribers.Inc()
	return h.last, nil
}

// indexLocked files s under the fan-out's index for its role: with the
// admins (every event) or with its user's streams. Called with mu held.
func (h *Hub) indexLocked(s *Subscription) {
	if s.admin.Load() {
		h.admins[s] = struct{}{}
		return
	}
	own := h.owners[s.viewer.UserID]
	if own == nil {
		own = map[*Subscription]struct{}{}
		h.owners[s.viewer.UserID] = own
	}
	own[s] = struct{}{}
}

// unindexLocked takes s out of the fan-out's index. Called with mu held.
func (h *Hub) unindexLocked(s *Subscription) {
	delete(h.admins, s)
	if own := h.owners[s.viewer.UserID]; own != nil {
		delete(own, s)
		if len(own) == 0 {
			delete(h.owners, s.viewer.UserID)
		}
	}
}

// setAdmin gives s the role a check of its credential found, and files it
// under the index of that role.
func (h *Hub) setAdmin(s *Subscription, admin bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.admin.Load() == admin {
		return
	}
	_, registered := h.subs[s]
	if registered {
		h.unindexLocked(s)
	}
	s.admin.Store(admin)
	if registered {
		h.indexLocked(s)
	}
}

// Recheck makes every open stream of the API key check its credential
// again before it delivers another event: the key, or its user, changed on
// this server (revoked, disabled, demoted), and the change must hold at
// once rather than at the stream's next periodic check.
func (h *Hub) Recheck(keyID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.open {
		if s.viewer.KeyID == keyID {
			s.askCheck()
		}
	}
}

// admit counts a new stream of its key, or refuses it over PerKey.
func (h *Hub) admit(s *Subscription) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perKey[s.viewer.KeyID] >= h.opts.PerKey {
		return apperr.New(apperr.CodeRateLimited, fmt.Sprintf("this API key has %d event streams open on this server, the most it may; close one first", h.opts.PerKey))
	}
	h.perKey[s.viewer.KeyID]++
	h.open[s] = struct{}{}
	return nil
}

// release ends s's place in the hub and in its key's count.
func (h *Hub) release(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(s, nil)
	delete(h.open, s)
	if n := h.perKey[s.viewer.KeyID]; n <= 1 {
		delete(h.perKey, s.viewer.KeyID)
	} else {
		h.perKey[s.viewer.KeyID] = n - 1
	}
}

// removeLocked takes s out of the fan-out, ending it with err if it is not
// ended yet. Called with mu held.
func (h *Hub) removeLocked(s *Subscription, err error) {
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		h.unindexLocked(s)
		h.metrics.subscribers.Dec()
	}
	if len(h.subs) == 0 {
		h.tailed = false // the next stream learns where the outbox ends
	}
	s.end(err)
}

// closeAll ends every subscription: the server is stopping, and open
// streams would otherwise hold its drain.
func (h *Hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		h.removeLocked(s, ErrShutdown)
	}
	h.stopped = true
}

// Subscribers is the number of streams receiving live events.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
