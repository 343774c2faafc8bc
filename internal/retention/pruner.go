package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
	vm "github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/deliveryattempt"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/periodic"
)

// DefaultMargin is how far behind the window's start the pruner cuts. An event's
// id is made before its transaction commits, so an event committed just
// after a cursor's may carry an id a little older than the cursor's; the
// margin, longer than any write transaction, keeps such an event until the
// cursor has expired too, so that a cursor still accepted never has a
// pruned event after it.
const DefaultMargin = time.Minute

// Options tune a Pruner; zero values take the production defaults.
type Options struct {
	// Window is the history kept (EVENT_RETENTION and the clock).
	Window Window
	// AuditRetention is how long audit records are kept (AUDIT_RETENTION),
	// on Window's clock; 0 keeps them forever.
	AuditRetention time.Duration
	// Margin is how far behind the window's start the pruner cuts.
	// Default DefaultMargin.
	Margin time.Duration
	// Every is the time between two passes; the first runs at start.
	// Default 5m.
	Every time.Duration
	// Batch is the most rows one statement selects, and so the most
	// deliveries or events one short transaction deletes. Default 500.
	Batch int
	// Pause is the wait after a full batch before the next, so that the
	// API's writers (SQLite has one at a time) get their turns while a
	// backlog is pruned. Default 50ms.
	Pause time.Duration
	// BatchTimeout bounds one batch's transaction. Default 30s.
	BatchTimeout time.Duration
	// Logger receives the pruner's lines. Default slog.Default().
	Logger *slog.Logger
	// Metrics receives the pruner's series; nil: not exported.
	Metrics *vm.Set
}

// Pruner deletes the events older than the window (less the margin) with their
// finished deliveries and those deliveries' attempts. An event still owed
// to an endpoint stays: one not yet fanned out to deliveries, or one with
// a pending delivery (an endpoint paused or backing off, a retry to come),
// until that delivery succeeds, fails or expires (internal/webhook). Every
// replica may run one: the deletes are idempotent, and on PostgreSQL a
// batch skips rows that another replica's batch holds.
type Pruner struct {
	db         *ent.Client
	skipLocked bool
	opts       Options
	log        *slog.Logger
	metrics    *metrics
}

// Result counts the rows one pass deleted.
type Result struct {
	Events, Deliveries, Attempts int
	// Audit counts the audit records past AUDIT_RETENTION.
	Audit int
}

// New returns a pruner over client; dialect is "postgres" or "sqlite".
func New(client *ent.Client, dialect string, opts Options) *Pruner {
	if opts.Margin <= 0 {
		opts.Margin = DefaultMargin
	}
	if opts.Every <= 0 {
		opts.Every = 5 * time.Minute
	}
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	if opts.Pause <= 0 {
		opts.Pause = 50 * time.Millisecond
	}
	if opts.BatchTimeout <= 0 {
		opts.BatchTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Pruner{
		db:         client,
		skipLocked: dialect == "postgres",
		opts:       opts,
		log:        opts.Logger.With("component", "retention"),
		metrics:    newMetrics(opts.Metrics, client, opts.Window),
	}
}

// Window is the history the pruner keeps, for the feeds' cursor checks.
func (p *Pruner) Window() Window { return p.opts.Window }

// system is the context of the pruner's statements: it acts for no viewer,
// past the privacy policies that keep clients off the outbox.
func system(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}

// Run prunes once at once, then every Every, until ctx is cancelled. With
// neither the window nor the audit retention limited it prunes nothing.
func (p *Pruner) Run(ctx context.Context) {
	if !p.opts.Window.On() && p.opts.AuditRetention <= 0 {
		return
	}
	periodic.Run(ctx, p.opts.Every, func(ctx context.Context) {
		res, err := p.Prune(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			p.metrics.failures.Inc()
			p.log.WarnContext(ctx, "prune event history", "err", err)
		case res != Result{}:
			p.log.InfoContext(ctx, "pruned event history", "events", res.Events,
				"deliveries", res.Deliveries, "attempts", res.Attempts, "retention", p.opts.Window.Retention,
				"audit_events", res.Audit, "audit_retention", p.opts.AuditRetention)
		}
	})
}

// Prune makes one pass: finished deliveries (with their attempts) of events
// older than the cut, then those events that no delivery holds any more,
// then the audit records older than AuditRetention, each in batches of its
// own short transaction until none is left.
func (p *Pruner) Prune(ctx context.Context) (Result, error) {
	var res Result
	var steps []func(context.Context, *ent.Tx) (batch, error)
	if p.opts.Window.On() {
		cut := idAt(p.opts.Window.Start().Add(-p.opts.Margin))
		steps = append(steps,
			func(ctx context.Context, tx *ent.Tx) (batch, error) { return p.deliveries(ctx, tx, cut) },
			func(ctx context.Context, tx *ent.Tx) (batch, error) { return p.events(ctx, tx, cut) })
	}
	if p.opts.AuditRetention > 0 {
		cut := Window{Retention: p.opts.AuditRetention, Now: p.opts.Window.Now}.Start()
		steps = append(steps, func(ctx context.Context, tx *ent.Tx) (batch, error) { return p.audit(ctx, tx, cut) })
	}
	for _, step := range steps {
		for {
			b, err := p.batch(ctx, step)
			if err != nil {
				return res, err
			}
			res.Events += b.deleted.Events
			res.Deliveries += b.deleted.Deliveries
			res.Attempts += b.deleted.Attempts
			res.Audit += b.deleted.Audit
			if b.selected < p.opts.Batch || !p.pause(ctx) {
				break
			}
		}
	}
	return res, ctx.Err()
}

// batch is what one batch did: the rows it selected (deliveries or events:
// fewer than Batch means none is left) and the rows it deleted.
type batch struct {
	selected int
	deleted  Result
}

// pause waits between two full batches; false: ctx ended.
func (p *Pruner) pause(ctx context.Context) bool {
	t := time.NewTimer(p.opts.Pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// batch runs one batch in its own transaction, bounded by BatchTimeout, and
// counts what it deleted once it committed.
func (p *Pruner) batch(ctx context.Context, fn func(context.Context, *ent.Tx) (batch, error)) (batch, error) {
	ctx, cancel := context.WithTimeout(system(ctx), p.opts.BatchTimeout)
	defer cancel()
	tx, err := p.db.Tx(ctx)
	if err != nil {
		return batch{}, fmt.Errorf("begin: %w", err)
	}
	b, err := fn(ctx, tx)
	if err != nil {
		_ = tx.Rollback()
		return batch{}, err
	}
	if err := tx.Commit(); err != nil {
		return batch{}, fmt.Errorf("commit: %w", err)
	}
	p.metrics.events.Add(b.deleted.Events)
	p.metrics.deliveries.Add(b.deleted.Deliveries)
	p.metrics.attempts.Add(b.deleted.Attempts)
	p.metrics.audit.Add(b.deleted.Audit)
	return b, nil
}

// deliveries deletes one batch of finished deliveries of events older than
// cut, oldest event first (the delivery_event_id index), with their
// attempts. A pending delivery is never selected; on PostgreSQL the rows
// are locked as they are selected, so a manual retry that would make one
// pending again waits for the batch, or has made it pending already.
func (p *Pruner) deliveries(ctx context.Context, tx *ent.Tx, cut string) (batch, error) {
	finished := delivery.StateIn(delivery.StateSucceeded, delivery.StateFailed)
	q := tx.Delivery.Query().
		Where(delivery.EventIDLT(cut), finished).
		Order(delivery.ByEventID()).
		Limit(p.opts.Batch)
	if p.skipLocked {
		q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	ids, err := q.IDs(ctx)
	if err != nil || len(ids) == 0 {
		return batch{}, wrap("select deliveries", err)
	}
	b := batch{selected: len(ids)}
	if b.deleted.Attempts, err = tx.DeliveryAttempt.Delete().Where(deliveryattempt.DeliveryIDIn(ids...)).Exec(ctx); err != nil {
		return batch{}, fmt.Errorf("delete attempts: %w", err)
	}
	if b.deleted.Deliveries, err = tx.Delivery.Delete().Where(delivery.IDIn(ids...), finished).Exec(ctx); err != nil {
		return batch{}, fmt.Errorf("delete deliveries: %w", err)
	}
	return b, nil
}

// events deletes one batch of events older than cut that are fanned out
// and that no delivery holds any more, oldest first (the primary key).
// Fanned-out events get no new deliveries, and the delete checks again
// that none is left, so an event still owed is never deleted.
func (p *Pruner) events(ctx context.Context, tx *ent.Tx, cut string) (batch, error) {
	q := tx.Event.Query().
		Where(event.IDLT(cut), owedNothing()).
		Order(event.ByID()).
		Limit(p.opts.Batch)
	if p.skipLocked {
		q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	ids, err := q.IDs(ctx)
	if err != nil || len(ids) == 0 {
		return batch{}, wrap("select events", err)
	}
	b := batch{selected: len(ids)}
	if b.deleted.Events, err = tx.Event.Delete().Where(event.IDIn(ids...), owedNothing()).Exec(ctx); err != nil {
		return batch{}, fmt.Errorf("delete events: %w", err)
	}
	return b, nil
}

// audit deletes one batch of the audit records made before cut, oldest
// first (the created_at index). Nothing else refers to them.
func (p *Pruner) audit(ctx context.Context, tx *ent.Tx, cut time.Time) (batch, error) {
	q := tx.AuditEvent.Query().
		Where(auditevent.CreatedAtLT(cut)).
		Order(auditevent.ByCreatedAt()).
		Limit(p.opts.Batch)
	if p.skipLocked {
		q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	ids, err := q.IDs(ctx)
	if err != nil || len(ids) == 0 {
		return batch{}, wrap("select audit events", err)
	}
	b := batch{selected: len(ids)}
	if b.deleted.Audit, err = tx.AuditEvent.Delete().Where(auditevent.IDIn(ids...)).Exec(ctx); err != nil {
		return batch{}, fmt.Errorf("delete audit events: %w", err)
	}
	return b, nil
}

// owedNothing selects the events fanned out whose deliveries are all gone.
// It is written as NOT EXISTS on the delivery_event_id index: ent's
// HasDeliveries is an IN over the whole deliveries table, which PostgreSQL
// reads once per batch.
func owedNothing() predicate.Event {
	return func(s *sql.Selector) {
		d := sql.Table(delivery.Table)
		s.Where(sql.And(
			sql.NotNull(s.C(event.FieldDispatchedAt)),
			sql.NotExists(sql.Select(d.C(delivery.FieldID)).From(d).
				Where(sql.ColumnsEQ(d.C(delivery.FieldEventID), s.C(event.FieldID)))),
		))
	}
}

// wrap is fmt.Errorf's %w for an error that may be nil.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
