package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"
	vm "github.com/VictoriaMetrics/metrics"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/ent/webhookendpoint"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/logging"
	"github.com/acme/itemsvc/internal/secrets"
)

// Options tune a Dispatcher; zero values take the production defaults.
type Options struct {
	// Schedule is the delay before each retry (WEBHOOK_RETRY_SCHEDULE); a
	// delivery gets len(Schedule)+1 attempts, then it has failed.
	Schedule []time.Duration
	// Timeout bounds one attempt, answer included. Default 15s.
	Timeout time.Duration
	// PollInterval is how often due retries are looked for when no commit
	// wakes the dispatcher. Default 1s.
	PollInterval time.Duration
	// DrainTimeout is how long in-flight attempts may finish after shutdown
	// begins; those cut short are released unspent. Default 5s.
	DrainTimeout time.Duration
	// Lease is how long a claim lasts: a dispatcher that dies holding
	// deliveries delays them by at most this. Default Timeout+DrainTimeout+10s.
	Lease time.Duration
	// Gather is how long a wake-up waits for more commits before a pass, so
	// that a burst of item changes is fanned out in one transaction instead
	// of one each (on SQLite each takes the write lock the API needs too).
	// Default 10ms; negative: none.
	Gather time.Duration
	// Concurrency is the number of attempts in flight. Default 16.
	Concurrency int
	// PerEndpoint caps the attempts in flight to one endpoint, across all
	// dispatchers sharing the database, so that a receiver that hangs holds
	// that many slots at most. An endpoint whose last attempt failed gets
	// one at a time until an attempt succeeds. Default 4.
	PerEndpoint int
	// FailingSlots is how many of the Concurrency slots may go to endpoints
	// whose last attempt failed; the others are kept for healthy ones.
	// Default Concurrency/2.
	FailingSlots int
	// BreakerThreshold is the number of attempts failed in a row after which
	// an endpoint's deliveries are not claimed for BreakerPause; each
	// further failure doubles the pause, up to BreakerMaxPause. Defaults 5,
	// 1m, 1h.
	BreakerThreshold int
	BreakerPause     time.Duration
	BreakerMaxPause  time.Duration
	// PauseRetention is how long deliveries wait for an endpoint that holds
	// them back, paused (active: false) or backing off; older ones fail.
	// Default the span of Schedule plus the most its jitter adds, at least
	// 72h.
	PauseRetention time.Duration
	// BatchSize is the number of events fanned out per transaction. Default 100.
	BatchSize int
	// Now is the clock of schedules and claims. Default time.Now.
	Now func() time.Time
	// Jitter spreads a retry delay. Default ±10%.
	Jitter func(time.Duration) time.Duration
	// Transport sends the requests. Default the guard's transport.
	Transport http.RoundTripper
	// Lookup resolves receiver hosts for the address guard built by the
	// app. Default the system resolver.
	Lookup LookupFunc
	// Secrets opens the endpoints' signing secrets, which the database
	// holds sealed (internal/secrets); nil takes them as stored.
	Secrets *secrets.Box
	// SecretLogEvery is how often, at most, an endpoint whose secret does
	// not open (SECRET_KEY changed) is logged again while its deliveries
	// keep failing. Default 15m.
	SecretLogEvery time.Duration
	// Logger receives the dispatcher's warnings. Default slog.Default().
	Logger *slog.Logger
	// Metrics receives the dispatcher's series; nil: not exported.
	Metrics *vm.Set
	// Tracer, when set, makes each attempt a span (its HTTP request a
	// client span under it, when Transport is traced too), linked to the
	// trace of the change that wrote the event; nil: no spans.
	Tracer trace.Tracer
}

// Dispatcher moves outbox events to their receivers: it fans each event out
// to the deliveries of the endpoints that want it, claims due deliveries,
// sends them signed, and records every attempt. Several dispatchers (one per
// replica) may share a PostgreSQL database: claims skip rows another holds.
type Dispatcher struct {
	db         *ent.Client
	skipLocked bool
	http       *http.Client
	opts       Options
	log        *slog.Logger
	metrics    *metrics
	wake       chan struct{}
	// freed is signalled when an attempt ends: its slot, and its
	// endpoint's, can take the next delivery at once, without the gathering
	// pause a commit's wake-up waits.
	freed chan struct{}

	// failing counts this dispatcher's attempts in flight to endpoints
	// whose last attempt had failed, held to FailingSlots.
	failing atomic.Int64
	// swept is when held deliveries were last expired (the dispatcher's
	// clock); only Run's goroutine touches it.
	swept time.Time

	// secretLogged is when each endpoint whose secret does not open was
	// last logged, so that a backlog logs a line per endpoint now and then,
	// not one per delivery.
	secretMu     sync.Mutex
	secretLogged map[string]secretLog
}

// secretLog is the last line logged for an endpoint whose secret does not
// open, and the attempts failed since.
type secretLog struct {
	at     time.Time
	failed int
}

// New returns a dispatcher over client; dialect is "postgres" or "sqlite"
// (SQLite has one writer, so it needs no row locks).
func New(client *ent.Client, dialect string, guard *Guard, opts Options) *Dispatcher {
	if len(opts.Schedule) == 0 {
		opts.Schedule = []time.Duration{5 * time.Second}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	if opts.Lease <= 0 {
		opts.Lease = opts.Timeout + opts.DrainTimeout + 10*time.Second
	}
	if opts.Gather == 0 {
		opts.Gather = 10 * time.Millisecond
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.PerEndpoint <= 0 {
		opts.PerEndpoint = 4
	}
	if opts.FailingSlots <= 0 {
		opts.FailingSlots = max(opts.Concurrency/2, 1)
	}
	if opts.BreakerThreshold <= 0 {
		opts.BreakerThreshold = 5
	}
	if opts.BreakerPause <= 0 {
		opts.BreakerPause = time.Minute
	}
	if opts.BreakerMaxPause <= 0 {
		opts.BreakerMaxPause = time.Hour
	}
	if opts.PauseRetention <= 0 {
		opts.PauseRetention = max(72*time.Hour, span(opts.Schedule)*11/10)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = jitter
	}
	if opts.Transport == nil {
		opts.Transport = guard.Transport()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SecretLogEvery <= 0 {
		opts.SecretLogEvery = 15 * time.Minute
	}
	return &Dispatcher{
		db:         client,
		skipLocked: dialect == "postgres",
		http: &http.Client{
			Transport: opts.Transport,
			// A redirect is an answer, not a delivery: following it would
			// also leave the address checked at registration.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		opts:    opts,
		log:     opts.Logger.With("component", "webhooks"),
		metrics: newMetrics(opts.Metrics, client),
		wake:    make(chan struct{}, 1),
		freed:   make(chan struct{}, 1),

		secretLogged: map[string]secretLog{},
	}
}

// Notify wakes the dispatcher after a commit; it never blocks, and wake-ups
// that arrive while it is busy fold into one.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// system is the context of the dispatcher's own reads and writes: it acts for
// no viewer, past the privacy policies that keep clients off the outbox.
func system(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}

// now is the dispatcher's clock at the precision the databases keep.
func (d *Dispatcher) now() time.Time {
	return d.opts.Now().UTC().Truncate(time.Microsecond)
}

// Run dispatches until ctx is cancelled, then lets in-flight attempts finish
// within DrainTimeout and releases those cut short, so that no delivery stays
// claimed by a stopped server.
func (d *Dispatcher) Run(ctx context.Context) {
	sendCtx, stopSends := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSends()
	stopDrain := context.AfterFunc(ctx, func() {
		time.AfterFunc(d.opts.DrainTimeout, stopSends)
	})
	defer stopDrain()

	slots := make(chan struct{}, d.opts.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()

	poll := time.NewTimer(d.opts.PollInterval)
	defer poll.Stop()
	gather := time.NewTimer(0)
	defer gather.Stop()
	for ctx.Err() == nil {
		if d.step(ctx, sendCtx, slots, &wg) {
			continue
		}
		poll.Reset(d.opts.PollInterval)
		select {
		case <-ctx.Done():
		case <-poll.C:
		case <-d.freed:
		case <-d.wake:
			if d.opts.Gather > 0 {
				gather.Reset(d.opts.Gather)
				select {
				case <-ctx.Done():
				case <-gather.C:
				}
			}
		}
	}
}

// step fans out pending events and starts as many due deliveries as there
// are free slots. It reports whether more work is likely waiting.
func (d *Dispatcher) step(ctx, sendCtx context.Context, slots chan struct{}, wg *sync.WaitGroup) bool {
	fanned, err := d.fanOut(ctx)
	if err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "fan out events", "err", err)
	}
	if err := d.expireHeld(ctx); err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "expire held deliveries", "err", err)
	}
	free := cap(slots) - len(slots)
	if free == 0 {
		return false // a finishing attempt wakes us
	}
	failingFree := min(free, max(d.opts.FailingSlots-int(d.failing.Load()), 0))
	claimed, err := d.claim(ctx, free, failingFree)
	if err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "claim deliveries", "err", err)
	}
	for _, dl := range claimed {
		slots <- struct{}{}
		failing := failingEndpoint(dl.Edges.Endpoint)
		if failing {
			d.failing.Add(1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.attempt(ctx, sendCtx, dl)
			if failing {
				d.failing.Add(-1)
			}
			<-slots
			select {
			case d.freed <- struct{}{}:
			default:
			}
		}()
	}
	return fanned == d.opts.BatchSize || (len(claimed) == free && free > 0)
}

// fanOut turns a batch of undispatched events into one pending delivery per
// interested endpoint and marks the events dispatched, in one transaction.
// An endpoint is interested when it belongs to the item's owner or to an
// admin, subscribes to the type, and existed when the event did. A paused
// endpoint (active: false) is interested too: its deliveries wait, pending,
// until it is active again or they expire (expireHeld).
func (d *Dispatcher) fanOut(ctx context.Context) (n int, err error) {
	ctx = system(ctx)
	// Look before taking a transaction: on SQLite every transaction takes
	// the write lock, which an idle dispatcher must not keep taking.
	//
	// Only published events (events.Published): the id a delivery carries
	// is a cursor its receiver may resume a feed after, and a feed resumed
	// after an event that older open transactions may still precede would
	// miss theirs.
	if found, err := d.db.Event.Query().Where(event.DispatchedAtIsNil(), events.Published()).Exist(ctx); err != nil || !found {
		return 0, err
	}
	tx, err := d.db.Tx(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	q := tx.Event.Query().
		Where(event.DispatchedAtIsNil(), events.Published()).
		Order(event.ByCreatedAt(), event.ByID()).
		Limit(d.opts.BatchSize)
	if d.skipLocked {
		q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	events, err := q.All(ctx)
	if err != nil {
		return 0, fmt.Errorf("select events: %w", err)
	}
	if len(events) == 0 {
		return 0, tx.Rollback()
	}
	owners := make([]string, 0, len(events))
	for _, ev := range events {
		if !slices.Contains(owners, ev.UserID) {
			owners = append(owners, ev.UserID)
		}
	}
	// The endpoints of the owners and of the enabled admins, as one list of
	// owners: each is then found through the endpoints' owner index, where
	// "owner in … or owner is an admin" read every endpoint and, for the
	// admins, every user (docs/benchmarks.md, at a million items).
	admins, err := tx.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).IDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("select admins: %w", err)
	}
	for _, id := range admins {
		if !slices.Contains(owners, id) {
			owners = append(owners, id)
		}
	}
	endpoints, err := tx.WebhookEndpoint.Query().
		Where(webhookendpoint.UserIDIn(owners...)).
		WithOwner().
		All(ctx)
	if err != nil {
		return 0, fmt.Errorf("select endpoints: %w", err)
	}
	now := d.now()
	var creates []*ent.DeliveryCreate
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
		for _, ep := range endpoints {
			if wants(ep, ev) {
				creates = append(creates, tx.Delivery.Create().
					SetEndpointID(ep.ID).
					SetEventID(ev.ID).
					SetNextAttemptAt(now))
			}
		}
	}
	for chunk := range slices.Chunk(creates, 500) {
		if err := tx.Delivery.CreateBulk(chunk...).Exec(ctx); err != nil {
			return 0, fmt.Errorf("create deliveries: %w", err)
		}
	}
	if err := tx.Event.Update().Where(event.IDIn(ids...)).SetDispatchedAt(now).Exec(ctx); err != nil {
		return 0, fmt.Errorf("mark events dispatched: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return len(events), nil
}

// wants reports whether an endpoint receives an event.
func wants(ep *ent.WebhookEndpoint, ev *ent.Event) bool {
	subscribed := len(ep.Events) == 0 || slices.Contains(ep.Events, ev.Type)
	return entitled(ep, ev) && subscribed && !ep.CreatedAt.After(ev.CreatedAt)
}

// entitled reports whether an endpoint's owner (loaded with it) may receive
// an event now: of their own item, or of anyone's as an admin; a disabled
// owner nothing. Checked when the event is fanned out and again before each
// attempt, so that an endpoint's rights follow its owner's as they are.
func entitled(ep *ent.WebhookEndpoint, ev *ent.Event) bool {
	owner := ep.Edges.Owner
	if owner == nil || owner.Disabled {
		return false
	}
	return ep.UserID == ev.UserID || owner.Role == user.RoleAdmin
}

// claim takes up to n due deliveries of active endpoints for this dispatcher
// until the lease ends, oldest first, at most failingN of them to endpoints
// whose last attempt failed, and never more than an endpoint has room for
// (PerEndpoint less its attempts in flight, whichever dispatcher holds
// them). On PostgreSQL claims take turns across dispatchers (a transaction
// lock held for the claim's few milliseconds), so that the in-flight counts
// each one reads are exact; rows another transaction is changing are
// skipped, not waited for, and a committed claim hides a row from the others.
func (d *Dispatcher) claim(ctx context.Context, n, failingN int) (claimed []*ent.Delivery, err error) {
	ctx = system(ctx)
	now := d.now()
	// Look before taking a transaction (on SQLite, the write lock), for an
	// endpoint with room: one at its cap with a backlog must not make every
	// pass take the lock for nothing.
	look := webhookendpoint.And(ready(now, d.opts.PerEndpoint, false)...)
	if failingN > 0 {
		look = webhookendpoint.Or(look, webhookendpoint.And(ready(now, d.opts.PerEndpoint, true)...))
	}
	if found, err := d.db.WebhookEndpoint.Query().Where(look).Exist(ctx); err != nil || !found {
		return nil, err
	}
	tx, err := d.db.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if d.skipLocked {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", claimLock); err != nil {
			return nil, fmt.Errorf("take the claim lock: %w", err)
		}
	}
	var ids []string
	for _, failing := range []bool{false, true} {
		limit := n
		if failing {
			limit = failingN
		}
		if limit <= 0 {
			continue
		}
		some, err := d.candidates(ctx, tx, now, limit, failing)
		if err != nil {
			return nil, err
		}
		ids = append(ids, some...)
	}
	if len(ids) == 0 {
		return nil, tx.Rollback()
	}
	q := tx.Delivery.Query().
		Where(delivery.IDIn(ids...)).
		Where(due(now)...).
		Order(delivery.ByNextAttemptAt(), delivery.ByCreatedAt(), delivery.ByID()).
		WithEvent().
		WithEndpoint(func(q *ent.WebhookEndpointQuery) { q.WithOwner() })
	if d.skipLocked {
		q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	found, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("select deliveries: %w", err)
	}
	// Oldest first, healthy or failing, within the slots and the failing
	// endpoints' share of them.
	failing := 0
	for _, dl := range found {
		if len(claimed) == n {
			break
		}
		if failingEndpoint(dl.Edges.Endpoint) {
			if failing == failingN {
				continue
			}
			failing++
		}
		claimed = append(claimed, dl)
	}
	if len(claimed) == 0 {
		return nil, tx.Rollback()
	}
	ids = ids[:0]
	for _, dl := range claimed {
		ids = append(ids, dl.ID)
	}
	if err := tx.Delivery.Update().Where(delivery.IDIn(ids...)).SetClaimedUntil(now.Add(d.opts.Lease)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return claimed, nil
}

// waiting selects the deliveries due at now, whatever their endpoint's
// state: pending, their time come, claimed by no live dispatcher.
func waiting(now time.Time) []predicate.Delivery {
	return []predicate.Delivery{
		delivery.StateEQ(delivery.StatePending),
		delivery.NextAttemptAtLTE(now),
		delivery.Or(delivery.ClaimedUntilIsNil(), delivery.ClaimedUntilLT(now)),
	}
}

// due selects the deliveries to attempt at now: waiting, to an active
// endpoint not backing off.
func due(now time.Time) []predicate.Delivery {
	return append(waiting(now), delivery.HasEndpointWith(
		webhookendpoint.Active(true),
		webhookendpoint.Or(webhookendpoint.BackoffUntilIsNil(), webhookendpoint.BackoffUntilLTE(now)),
	))
}

// result is what one attempt came to.
type result struct {
	status   int // 0: no answer
	header   http.Header
	err      error
	duration time.Duration
	// unopenable: the endpoint's secret does not open with this server's
	// SECRET_KEY, so nothing was sent. The failure is the server's, not the
	// receiver's: it does not count against the endpoint's breaker.
	unopenable bool
	// unentitled: the endpoint's owner may no longer receive the event
	// (disabled, or no longer an admin), so nothing was sent; the delivery
	// fails at once and does not count against the breaker either.
	unentitled bool
}

// NotEntitled is the error an attempt records when the endpoint's owner may
// no longer receive its event: nothing was sent.
const NotEntitled = "not sent: the endpoint's owner may no longer receive this event (disabled, or no longer an admin)"

// SecretUnopenable is the error an attempt records when the endpoint's
// signing secret does not open with the server's SECRET_KEY (it was changed
// or lost since the secret was sealed): nothing was sent. Rotating the
// secret makes such deliveries due again.
const SecretUnopenable = "webhook secret cannot be opened: SECRET_KEY changed; not sent " +
	"(restore the previous SECRET_KEY, or rotate the secret: POST /v1/webhooks/{id}/rotate-secret)"

// attempt sends one claimed delivery and records the result, or releases the
// claim when shutdown cut the attempt short.
func (d *Dispatcher) attempt(ctx, sendCtx context.Context, dl *ent.Delivery) {
	if d.opts.Tracer != nil {
		var span trace.Span
		sendCtx, span = d.startSpan(sendCtx, dl)
		defer span.End()
		ctx = trace.ContextWithSpan(ctx, span) // the recording's statements too
	}
	res := d.send(sendCtx, dl.Edges.Event, dl.Edges.Endpoint)
	// Recording outlives shutdown: an attempt that was made is written down.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if res.err != nil && !res.unopenable && !res.unentitled && sendCtx.Err() != nil {
		if err := d.release(rctx, dl.ID); err != nil {
			d.log.WarnContext(rctx, "release delivery", "delivery", dl.ID, "err", err)
		}
		return
	}
	if err := d.record(rctx, dl, res); err != nil {
		d.log.WarnContext(rctx, "record delivery attempt", "delivery", dl.ID, "err", err)
	}
	if res.unopenable {
		d.metrics.unopenable.Inc()
		d.logUnopenable(rctx, dl.EndpointID)
	}
}

// logUnopenable says, at ERROR, that an endpoint's deliveries fail because
// its secret does not open: at most once per SecretLogEvery per endpoint,
// with the attempts failed since the last line.
func (d *Dispatcher) logUnopenable(ctx context.Context, endpointID string) {
	now := d.now()
	d.secretMu.Lock()
	last, seen := d.secretLogged[endpointID]
	last.failed++
	due := !seen || now.Sub(last.at) >= d.opts.SecretLogEvery
	if due {
		d.secretLogged[endpointID] = secretLog{at: now}
		// Forget endpoints not logged for a while (rotated or deleted).
		for id, l := range d.secretLogged {
			if now.Sub(l.at) >= 2*d.opts.SecretLogEvery {
				delete(d.secretLogged, id)
			}
		}
	} else {
		d.secretLogged[endpointID] = last
	}
	d.secretMu.Unlock()
	if !due {
		return
	}
	d.log.ErrorContext(ctx, "webhook deliveries fail unsent: the endpoint's signing secret does not open with this SECRET_KEY "+
		"(changed or lost since it was sealed); restore the previous SECRET_KEY, or rotate the endpoint's secret "+
		"with POST /v1/webhooks/{id}/rotate-secret and give the receiver the new one",
		"endpoint", endpointID, "failed_attempts", last.failed, "next_log_within", d.opts.SecretLogEvery.String())
}

// send POSTs the event to the endpoint with the Standard Webhooks headers.
func (d *Dispatcher) send(ctx context.Context, ev *ent.Event, ep *ent.WebhookEndpoint) result {
	if ev == nil || ep == nil {
		return result{err: errors.New("delivery without its event or endpoint")}
	}
	if !entitled(ep, ev) {
		return result{err: errors.New(NotEntitled), unentitled: true}
	}
	payload, err := Payload(ev)
	if err != nil {
		return result{err: err}
	}
	ts := d.now()
	keys, err := signingSecrets(d.opts.Secrets, ep, ts)
	if errors.Is(err, secrets.ErrOpen) {
		return result{err: err, unopenable: true}
	}
	if err != nil {
		return result{err: err}
	}
	sig, err := Sign(ev.ID, ts, payload, keys...)
	if err != nil {
		return result{err: err}
	}
	start := time.Now() // before the deadline is set: a timeout lasts at least Timeout
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(payload))
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "itemsvc-webhooks/1")
	req.Header.Set(HeaderID, ev.ID)
	req.Header.Set(HeaderTimestamp, fmt.Sprint(ts.Unix()))
	req.Header.Set(HeaderSignature, sig)
	resp, err := d.http.Do(req)
	if err == nil {
		// Read a little of the answer so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
	res := result{err: err, duration: time.Since(start)}
	if err == nil {
		res.status, res.header = resp.StatusCode, resp.Header
	}
	d.metrics.latency.Update(res.duration.Seconds())
	return res
}

// outcome decides what follows an attempt numbered n, and when the next
// attempt is due if there is one.
func (d *Dispatcher) outcome(n int, res result, now time.Time) (string, time.Time) {
	switch {
	case res.err == nil && res.status >= 200 && res.status < 300:
		return OutcomeSucceeded, time.Time{}
	case res.err == nil && res.status == http.StatusGone:
		return OutcomeDisabled, time.Time{}
	case res.unentitled, n > len(d.opts.Schedule):
		return OutcomeFailed, time.Time{}
	}
	delay := d.opts.Jitter(d.opts.Schedule[n-1])
	if ra, ok := retryAfter(res.status, res.header, now); ok {
		delay = ra
	}
	return OutcomeRetrying, now.Add(delay)
}

// describe is the attempt's error as the delivery log shows it.
func (d *Dispatcher) describe(res result) string {
	var refused *DialError
	switch {
	case res.unopenable:
		return SecretUnopenable
	case res.unentitled:
		return NotEntitled
	case res.err == nil && res.status >= 200 && res.status < 300:
		return ""
	case res.err == nil:
		return fmt.Sprintf("receiver answered %d %s", res.status, http.StatusText(res.status))
	case errors.As(res.err, &refused):
		return fmt.Sprintf("refused: the receiver's address %s is %s (%v)", refused.Addr, refused.Reason, ErrForbiddenAddress)
	case errors.Is(res.err, ErrForbiddenAddress):
		return "refused: the receiver's address is " + ErrForbiddenAddress.Error()
	case errors.Is(res.err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", d.opts.Timeout)
	}
	msg := res.err.Error()
	// The client's error names the URL, whose credentials (a password, a
	// query's token) must not reach the delivery log: admins read it too.
	var uerr *url.Error
	if errors.As(res.err, &uerr) {
		redacted := *uerr
		redacted.URL = logging.RedactURL(uerr.URL)
		msg = strings.Replace(msg, uerr.Error(), redacted.Error(), 1)
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// record writes an attempt to the log and moves its delivery on: succeeded,
// retrying at its next time, failed; a 410 also disables the endpoint.
func (d *Dispatcher) record(ctx context.Context, dl *ent.Delivery, res result) (err error) {
	ctx = system(ctx)
	now := d.now()
	n := dl.Attempts + 1
	outcome, next := d.outcome(n, res, now)
	msg := d.describe(res)
	ms := int(res.duration.Milliseconds())
	var status *int
	if res.err == nil {
		status = &res.status
	}

	tx, err := d.db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	u := tx.Delivery.UpdateOneID(dl.ID).
		SetAttempts(n).
		SetLastError(msg).
		SetLastDurationMs(ms).
		ClearClaimedUntil()
	if status != nil {
		u.SetLastStatusCode(*status)
	} else {
		u.ClearLastStatusCode()
	}
	switch outcome {
	case OutcomeSucceeded:
		u.SetState(delivery.StateSucceeded)
	case OutcomeRetrying:
		u.SetNextAttemptAt(next)
	default:
		u.SetState(delivery.StateFailed)
	}
	if err := u.Exec(ctx); err != nil {
		if ent.IsNotFound(err) {
			// The endpoint was deleted during the attempt, its log with it.
			return tx.Rollback()
		}
		return fmt.Errorf("update delivery: %w", err)
	}
	if err := tx.DeliveryAttempt.Create().
		SetDeliveryID(dl.ID).
		SetNumber(n).
		SetNillableStatusCode(status).
		SetError(msg).
		SetDurationMs(ms).
		Exec(ctx); err != nil {
		return fmt.Errorf("log attempt: %w", err)
	}
	tripped := false
	switch outcome {
	case OutcomeDisabled:
		if err := tx.WebhookEndpoint.UpdateOneID(dl.EndpointID).SetActive(false).Exec(ctx); err != nil {
			return fmt.Errorf("disable endpoint: %w", err)
		}
		d.log.InfoContext(ctx, "webhook endpoint answered 410 Gone: disabled", "endpoint", dl.EndpointID)
	case OutcomeSucceeded:
		// A healthy endpoint's row is left alone; if another attempt
		// failed meanwhile, the next success claimed after it resets it.
		if failingEndpoint(dl.Edges.Endpoint) {
			if err := d.closeBreaker(ctx, tx, dl.EndpointID); err != nil {
				return err
			}
		}
	case OutcomeRetrying, OutcomeFailed:
		// A secret this server cannot open is not the receiver's failure:
		// its breaker and its share of the slots stay as they were.
		if res.unopenable || res.unentitled {
			break
		}
		if tripped, err = d.countFailure(ctx, tx, dl.EndpointID, now); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	d.metrics.outcomes[outcome].Inc()
	if tripped {
		d.metrics.trips.Inc()
	}
	return nil
}

// release gives a claimed delivery back untouched: the attempt was not made
// (or not answered) because this server is stopping, so it is not counted.
func (d *Dispatcher) release(ctx context.Context, id string) error {
	err := d.db.Delivery.UpdateOneID(id).ClearClaimedUntil().Exec(system(ctx))
	if ent.IsNotFound(err) {
		return nil
	}
	return err
}
