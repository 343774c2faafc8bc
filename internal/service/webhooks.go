package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/deliveryattempt"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/webhookendpoint"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/logging"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/webhook"
)

// Webhook bounds and rules (DESIGN §4).
const (
	MaxWebhookDescriptionLen = 500
	// SecretRotationGrace is how long the previous secret keeps signing
	// after a rotation, so receivers can switch without a gap.
	SecretRotationGrace = 24 * time.Hour
	// AttemptsShown bounds the attempt log carried by each delivery (REST's
	// attempt_log, GraphQL's attemptLog, which the cost model prices so).
	AttemptsShown = 20
)

// WebhookInput is a set of endpoint fields; a nil field is absent. On create
// URL is required; on update only the fields present change.
type WebhookInput struct {
	URL         *string
	Description *string
	Events      *[]string // empty: all events
	Active      *bool
}

// WebhookPage is one page of endpoints and the count of all of them.
type WebhookPage struct {
	Webhooks []*ent.WebhookEndpoint
	Total    int
	// More reports endpoints after the page.
	More bool
}

// DeliveryParams select one page of an endpoint's delivery log.
type DeliveryParams struct {
	PageParams
	State string // "" for any
}

// DeliveryPage is one page of deliveries, newest first, each with its latest
// attempts, and the count of all matching ones.
type DeliveryPage struct {
	Deliveries []*ent.Delivery
	Total      int
	// More reports deliveries after the page.
	More bool
}

// normalize checks every present field, naming the first bad one; the URL is
// checked against the address guard (no private networks).
func (in *WebhookInput) normalize(ctx context.Context, guard *webhook.Guard) error {
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		if err := guard.CheckURL(ctx, u); err != nil {
			var ue *webhook.URLError
			if errors.As(err, &ue) {
				return apperr.Validation("url", ue.Reason)
			}
			return fmt.Errorf("check url: %w", err)
		}
		in.URL = &u
	}
	if in.Description != nil {
		if err := checkText("description", *in.Description, MaxWebhookDescriptionLen); err != nil {
			return err
		}
	}
	if in.Events != nil {
		events := []string{}
		for _, e := range *in.Events {
			if !slices.Contains(webhook.EventTypes, e) {
				return apperr.Validation("events", "each must be one of: "+strings.Join(webhook.EventTypes, ", "))
			}
		}
		for _, e := range webhook.EventTypes { // canonical order, no duplicates
			if slices.Contains(*in.Events, e) {
				events = append(events, e)
			}
		}
		in.Events = &events
	}
	return nil
}

// ListWebhooks returns one page of the endpoints the viewer may see (an
// admin: everyone's), newest first.
func (s *Service) ListWebhooks(ctx context.Context, p PageParams) (WebhookPage, error) {
	if _, err := requireViewer(ctx); err != nil {
		return WebhookPage{}, err
	}
	q := s.reads(ctx).WebhookEndpoint.Query()
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return WebhookPage{}, fmt.Errorf("count webhooks: %w", err)
	}
	out := WebhookPage{Total: total, Webhooks: []*ent.WebhookEndpoint{}}
	if k := p.After; k != nil {
		q.Where(k.older())
	} else if p.offset() >= total {
		return out, nil
	} else {
		q.Offset(p.offset())
	}
	rows, err := q.
		Order(webhookendpoint.ByCreatedAt(sql.OrderDesc()), webhookendpoint.ByID(sql.OrderDesc())).
		Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return WebhookPage{}, fmt.Errorf("list webhooks: %w", err)
	}
	out.Webhooks, out.More = cut(rows, p.Limit)
	return out, nil
}

// GetWebhook returns an endpoint the viewer may see.
func (s *Service) GetWebhook(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	return s.webhook(ctx, s.reads(ctx), id)
}

// webhook reads an endpoint through c (the client or a transaction's),
// explaining a miss as PERMISSION_DENIED or NOT_FOUND.
func (s *Service) webhook(ctx context.Context, c *ent.Client, id string) (*ent.WebhookEndpoint, error) {
	if !pulid.Valid("whk_", id) {
		return nil, apperr.NotFound("webhook")
	}
	ep, err := c.WebhookEndpoint.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, s.missingWebhook(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get webhook: %w", err)
	}
	return ep, nil
}

// CreateWebhook registers an endpoint owned by the viewer with a fresh
// secret. The returned endpoint carries the secret: show it now, never again.
func (s *Service) CreateWebhook(ctx context.Context, in WebhookInput) (*ent.WebhookEndpoint, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if in.URL == nil {
		return nil, apperr.Validation("url", "is required")
	}
	if err := in.normalize(ctx, s.webhookGuard()); err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	// In a transaction, though it is one statement: under an
	// Idempotency-Key it joins the request's (idempotency.go).
	var ep *ent.WebhookEndpoint
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		c := tx.WebhookEndpoint.Create().
			SetUserID(v.UserID).
			SetURL(*in.URL).
			SetSecret(s.seal(secret)).
			SetEvents([]string{})
		if in.Description != nil {
			c.SetDescription(*in.Description)
		}
		if in.Events != nil {
			c.SetEvents(*in.Events)
		}
		if in.Active != nil {
			c.SetActive(*in.Active)
		}
		if ep, err = c.Save(ctx); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, AuditWebhookCreated, ep.ID, map[string]Change{
			"url":         {After: logging.RedactURL(ep.URL)},
			"description": {After: ep.Description},
			"events":      {After: ep.Events},
			"active":      {After: ep.Active},
		})
	})
	if err != nil {
		return nil, fmt.Errorf("create webhook: %w", err)
	}
	ep.Secret = secret // shown once, at creation; stored sealed
	showOnce(ctx, secret)
	return ep, nil
}

// seal prepares a signing secret for storage.
func (s *Service) seal(secret string) string {
	if s.opts.SecretBox == nil {
		return secret
	}
	return s.opts.SecretBox.Seal(secret)
}

// SealWebhookSecrets seals the signing secrets that an earlier version
// stored in plaintext, and seals again, in the format that names the key
// (internal/secrets), those sealed in the first format that open with this
// server's secret. It returns how many endpoints it changed. The server runs
// it at start; it is idempotent.
func (s *Service) SealWebhookSecrets(ctx context.Context) (int, error) {
	box := s.opts.SecretBox
	if box == nil {
		return 0, nil
	}
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	// Only the rows in plaintext or in the first format: after the first
	// start, none (but those of the first format that another secret
	// sealed), and a start reads nothing more.
	eps, err := s.db.WebhookEndpoint.Query().Where(webhookendpoint.Or(
		webhookendpoint.Not(webhookendpoint.SecretHasPrefix(secrets.SealedPrefix)),
		webhookendpoint.SecretHasPrefix(secrets.LegacyPrefix),
		webhookendpoint.And(
			webhookendpoint.PreviousSecretNEQ(""),
			webhookendpoint.Or(
				webhookendpoint.Not(webhookendpoint.PreviousSecretHasPrefix(secrets.SealedPrefix)),
				webhookendpoint.PreviousSecretHasPrefix(secrets.LegacyPrefix),
			),
		),
	)).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("seal webhook secrets: %w", err)
	}
	// reseal returns the value to store instead of v, if any.
	reseal := func(v string) (string, bool) {
		if !secrets.IsSealed(v) {
			return box.Seal(v), true
		}
		if strings.HasPrefix(v, secrets.LegacyPrefix) {
			if plain, err := box.Open(v); err == nil {
				return box.Seal(plain), true
			}
		}
		return "", false
	}
	n := 0
	for _, ep := range eps {
		u := s.db.WebhookEndpoint.UpdateOneID(ep.ID)
		changed := false
		if v, ok := reseal(ep.Secret); ok {
			u.SetSecret(v)
			changed = true
		}
		if ep.PreviousSecret != "" {
			if v, ok := reseal(ep.PreviousSecret); ok {
				u.SetPreviousSecret(v)
				changed = true
			}
		}
		if !changed {
			continue
		}
		if err := u.Exec(ctx); err != nil {
			return n, fmt.Errorf("seal webhook secret of %s: %w", ep.ID, err)
		}
		n++
	}
	return n, nil
}

// UnopenableSecrets is what a start finds of the endpoints whose signing
// secret does not open with the server's secret: how many, of how many,
// and the first few ids.
type UnopenableSecrets struct {
	Count, Total int
	First        []*ent.WebhookEndpoint // with their owners
}

// UnopenableWebhookSecrets counts the endpoints whose signing secret does
// not open with this server's secret (SECRET_KEY changed or lost since it
// was sealed), and names up to first of them, oldest first. It opens
// nothing: a sealed value names its key (secrets.Box.Prefix), so this is
// a count in the database, run after SealWebhookSecrets has given every
// value that opens the current format.
func (s *Service) UnopenableWebhookSecrets(ctx context.Context, first int) (UnopenableSecrets, error) {
	var out UnopenableSecrets
	if s.opts.SecretBox == nil {
		return out, nil
	}
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	q := s.db.WebhookEndpoint.Query().Where(webhookendpoint.Not(webhookendpoint.SecretHasPrefix(s.opts.SecretBox.Prefix())))
	var err error
	if out.Count, err = q.Clone().Count(ctx); err != nil {
		return out, fmt.Errorf("count webhooks whose secret does not open: %w", err)
	}
	if out.Total, err = s.db.WebhookEndpoint.Query().Count(ctx); err != nil || out.Count == 0 {
		return out, err
	}
	out.First, err = q.Order(webhookendpoint.ByCreatedAt(), webhookendpoint.ByID()).Limit(first).WithOwner().All(ctx)
	if err != nil {
		return out, fmt.Errorf("list webhooks whose secret does not open: %w", err)
	}
	return out, nil
}

// UpdateWebhook changes the fields present in the input. Turning an endpoint
// back on (active: true) resumes the deliveries that waited for it, in the
// order they were created, and lifts the circuit breaker's pause.
func (s *Service) UpdateWebhook(ctx context.Context, id string, in WebhookInput) (*ent.WebhookEndpoint, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	if err := in.normalize(ctx, s.webhookGuard()); err != nil {
		return nil, err
	}
	var ep *ent.WebhookEndpoint
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		cur, err := s.webhook(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		u := tx.WebhookEndpoint.UpdateOne(cur)
		if in.URL != nil {
			u.SetURL(*in.URL)
		}
		if in.Description != nil {
			u.SetDescription(*in.Description)
		}
		if in.Events != nil {
			u.SetEvents(*in.Events)
		}
		if in.Active != nil {
			u.SetActive(*in.Active)
			if *in.Active && !cur.Active {
				u.ClearBackoffUntil()
			}
		}
		if ep, err = u.Save(ctx); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, AuditWebhookUpdated, ep.ID, webhookChanges(cur, ep))
	})
	if err != nil {
		return nil, fmt.Errorf("update webhook: %w", err)
	}
	if in.Active != nil && *in.Active {
		s.wakeDispatcher()
	}
	return ep, nil
}

// wakeDispatcher tells the webhook dispatcher that deliveries became due,
// rather than leaving them to its poll.
func (s *Service) wakeDispatcher() {
	if s.opts.OnCommit != nil {
		s.opts.OnCommit()
	}
}

// DeleteWebhook removes an endpoint with its deliveries and their log; an
// attempt in flight is not recorded.
func (s *Service) DeleteWebhook(ctx context.Context, id string) error {
	if _, err := requireViewer(ctx); err != nil {
		return err
	}
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		ep, err := s.webhook(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		// Deliveries and attempts are the dispatcher's rows: the viewer's
		// right to them is the right to the endpoint, checked just above.
		sys := system(ctx)
		if _, err := tx.DeliveryAttempt.Delete().
			Where(deliveryattempt.HasDeliveryWith(delivery.EndpointID(ep.ID))).Exec(sys); err != nil {
			return fmt.Errorf("delete attempts: %w", err)
		}
		if _, err := tx.Delivery.Delete().Where(delivery.EndpointID(ep.ID)).Exec(sys); err != nil {
			return fmt.Errorf("delete deliveries: %w", err)
		}
		if err := tx.WebhookEndpoint.DeleteOne(ep).Exec(ctx); err != nil {
			return err
		}
		return s.recordAudit(ctx, tx, AuditWebhookDeleted, ep.ID, webhookChanges(ep, nil))
	})
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	return nil
}

// RotateWebhookSecret gives an endpoint a new secret; the old one keeps
// signing beside it for SecretRotationGrace, unless it does not open with
// this server's secret (SECRET_KEY changed: the reason to rotate), when it
// is dropped. A rotation is also the fix for that case, so it clears the
// endpoint's circuit breaker and makes the deliveries that failed unsent for
// want of the secret due now. The returned endpoint carries the new secret:
// show it now, never again.
func (s *Service) RotateWebhookSecret(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	var ep *ent.WebhookEndpoint
	secret := webhook.NewSecret()
	unblocked := 0
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		cur, err := s.webhook(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		u := tx.WebhookEndpoint.UpdateOne(cur).
			SetSecret(s.seal(secret)).
			SetConsecutiveFailures(0).
			ClearBackoffUntil()
		if s.opens(cur.Secret) {
			u.SetPreviousSecret(cur.Secret).SetPreviousSecretExpiresAt(now.Add(SecretRotationGrace))
		} else {
			u.ClearPreviousSecret().ClearPreviousSecretExpiresAt()
		}
		if ep, err = u.Save(ctx); err != nil {
			return err
		}
		// Deliveries are the dispatcher's rows: the viewer's right to them
		// is the right to the endpoint, checked just above.
		unblocked, err = tx.Delivery.Update().
			Where(
				delivery.EndpointID(cur.ID),
				delivery.StateEQ(delivery.StatePending),
				delivery.LastError(webhook.SecretUnopenable),
				delivery.Or(delivery.ClaimedUntilIsNil(), delivery.ClaimedUntilLT(now)),
			).
			SetNextAttemptAt(now).
			Save(system(ctx))
		if err != nil {
			return fmt.Errorf("requeue deliveries: %w", err)
		}
		// The fact of the rotation only: no secret, old or new, sealed or not.
		return s.recordAudit(ctx, tx, AuditWebhookSecretRotated, ep.ID, map[string]Change{})
	})
	if err != nil {
		return nil, fmt.Errorf("rotate webhook secret: %w", err)
	}
	if unblocked > 0 || ep.Active {
		s.wakeDispatcher() // the breaker is clear: deliveries may be due
	}
	ep.Secret = secret // shown once; stored sealed
	showOnce(ctx, secret)
	return ep, nil
}

// opens reports whether a stored secret opens with this server's secret.
func (s *Service) opens(stored string) bool {
	if s.opts.SecretBox == nil {
		return true
	}
	_, err := s.opts.SecretBox.Open(stored)
	return err == nil
}

// ListDeliveries returns one page of an endpoint's delivery log, newest
// first, each delivery with its event and latest attempts.
func (s *Service) ListDeliveries(ctx context.Context, webhookID string, p DeliveryParams) (DeliveryPage, error) {
	if _, err := requireViewer(ctx); err != nil {
		return DeliveryPage{}, err
	}
	c := s.reads(ctx)
	if _, err := s.webhook(ctx, c, webhookID); err != nil {
		return DeliveryPage{}, err
	}
	q := c.Delivery.Query().Where(delivery.EndpointID(webhookID))
	if p.State != "" {
		q.Where(delivery.StateEQ(delivery.State(p.State)))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return DeliveryPage{}, fmt.Errorf("count deliveries: %w", err)
	}
	out := DeliveryPage{Total: total, Deliveries: []*ent.Delivery{}}
	if k := p.After; k != nil {
		q.Where(k.older())
	} else if p.offset() >= total {
		return out, nil
	} else {
		q.Offset(p.offset())
	}
	rows, err := q.
		Order(delivery.ByCreatedAt(sql.OrderDesc()), delivery.ByID(sql.OrderDesc())).
		Limit(p.Limit + 1).
		WithEvent().
		All(ctx)
	if err != nil {
		return DeliveryPage{}, fmt.Errorf("list deliveries: %w", err)
	}
	out.Deliveries, out.More = cut(rows, p.Limit)
	if err := s.loadAttempts(ctx, out.Deliveries...); err != nil {
		return DeliveryPage{}, err
	}
	return out, nil
}

// loadAttempts fills each delivery's attempt log, newest first, at most
// AttemptsShown each, in one query (a delivery has about ten attempts at
// most: the retry schedule plus manual retries).
func (s *Service) loadAttempts(ctx context.Context, ds ...*ent.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	atts, err := s.reads(ctx).DeliveryAttempt.Query().
		Where(deliveryattempt.DeliveryIDIn(ids...)).
		Order(deliveryattempt.ByNumber(sql.OrderDesc())).
		All(ctx)
	if err != nil {
		return fmt.Errorf("list attempts: %w", err)
	}
	byDelivery := map[string][]*ent.DeliveryAttempt{}
	for _, a := range atts {
		if len(byDelivery[a.DeliveryID]) < AttemptsShown {
			byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], a)
		}
	}
	for _, d := range ds {
		d.Edges.AttemptLog = byDelivery[d.ID]
		if d.Edges.AttemptLog == nil {
			d.Edges.AttemptLog = []*ent.DeliveryAttempt{}
		}
	}
	return nil
}

// RetryDelivery schedules a delivery to be sent again now: a failed one gets
// one more attempt, a succeeded one is sent again (receivers deduplicate on
// webhook-id), and the circuit breaker's pause is lifted. A delivery being
// attempted right now is left as it is.
func (s *Service) RetryDelivery(ctx context.Context, webhookID, deliveryID string) (*ent.Delivery, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	var out *ent.Delivery
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		ep, err := s.webhook(ctx, tx.Client(), webhookID)
		if err != nil {
			return err
		}
		if !pulid.Valid("dlv_", deliveryID) {
			return apperr.NotFound("delivery")
		}
		d, err := tx.Delivery.Query().
			Where(delivery.ID(deliveryID), delivery.EndpointID(ep.ID)).
			Only(ctx)
		if ent.IsNotFound(err) {
			return apperr.NotFound("delivery")
		}
		if err != nil {
			return fmt.Errorf("get delivery: %w", err)
		}
		if !ep.Active {
			return apperr.Validation("active", "the webhook is disabled; enable it (PUT active: true) before retrying")
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if d.State == delivery.StatePending && d.ClaimedUntil != nil && d.ClaimedUntil.After(now) {
			out = d // in flight: its result is about to be recorded
			return s.recordAudit(ctx, tx, AuditDeliveryRetried, d.ID, map[string]Change{})
		}
		out, err = tx.Delivery.UpdateOne(d).
			SetState(delivery.StatePending).
			SetNextAttemptAt(now).
			ClearClaimedUntil().
			Save(system(ctx))
		if err != nil {
			return err
		}
		changes := map[string]Change{}
		if d.State != out.State {
			changes["state"] = Change{d.State, out.State}
		}
		if err := s.recordAudit(ctx, tx, AuditDeliveryRetried, d.ID, changes); err != nil {
			return err
		}
		if ep.BackoffUntil == nil {
			return nil
		}
		// Asked for now: the circuit breaker does not hold it back.
		return tx.WebhookEndpoint.UpdateOne(ep).ClearBackoffUntil().Exec(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("retry delivery: %w", err)
	}
	s.wakeDispatcher()
	out.Edges.Event, err = s.reads(ctx).Event.Get(system(ctx), out.EventID)
	if err != nil {
		return nil, fmt.Errorf("get event: %w", err)
	}
	if err := s.loadAttempts(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// RecoverDeliveries re-queues every failed delivery of an endpoint created at
// or after since (an outage longer than the retry schedule): each becomes
// pending and due now, and gets one more attempt, as a manual retry gives.
// They go out oldest first. It lifts the circuit breaker's pause, and
// returns how many were re-queued. since must not be in the future; the
// endpoint must be active.
func (s *Service) RecoverDeliveries(ctx context.Context, webhookID string, since *time.Time) (int, error) {
	if _, err := requireViewer(ctx); err != nil {
		return 0, err
	}
	if since == nil {
		return 0, apperr.Validation("since", "is required")
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	if since.After(now) {
		return 0, apperr.Validation("since", "must not be in the future")
	}
	var n int
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		ep, err := s.webhook(ctx, tx.Client(), webhookID)
		if err != nil {
			return err
		}
		if !ep.Active {
			return apperr.Validation("active", "the webhook is disabled; enable it (PUT active: true) before recovering")
		}
		// Deliveries are the dispatcher's rows: the viewer's right to them
		// is the right to the endpoint, checked just above.
		n, err = tx.Delivery.Update().
			Where(
				delivery.EndpointID(ep.ID),
				delivery.StateEQ(delivery.StateFailed),
				delivery.CreatedAtGTE(since.UTC()),
			).
			SetState(delivery.StatePending).
			SetNextAttemptAt(now).
			ClearClaimedUntil().
			Save(system(ctx))
		if err != nil {
			return fmt.Errorf("requeue deliveries: %w", err)
		}
		if err := s.recordAudit(ctx, tx, AuditDeliveriesRecovered, ep.ID, map[string]Change{
			"recovered": {After: n},
		}); err != nil {
			return err
		}
		if n > 0 && ep.BackoffUntil != nil {
			return tx.WebhookEndpoint.UpdateOne(ep).ClearBackoffUntil().Exec(ctx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover deliveries: %w", err)
	}
	if n > 0 {
		s.wakeDispatcher()
	}
	return n, nil
}

// missingWebhook explains why the viewer could not reach an endpoint:
// another user's (PERMISSION_DENIED) or none at all (NOT_FOUND).
func (s *Service) missingWebhook(ctx context.Context, id string) error {
	exists, err := s.reads(ctx).WebhookEndpoint.Query().Where(webhookendpoint.ID(id)).Exist(system(ctx))
	if err != nil {
		return fmt.Errorf("check webhook: %w", err)
	}
	if exists {
		return apperr.PermissionDenied("the webhook belongs to another user")
	}
	return apperr.NotFound("webhook")
}

// webhookGuard is the address guard of receiver URLs; without one wired,
// the strict default (no private networks, the system resolver).
func (s *Service) webhookGuard() *webhook.Guard {
	if s.opts.WebhookGuard != nil {
		return s.opts.WebhookGuard
	}
	return webhook.NewGuard(false, nil)
}

// webhookChanges are the audit changes from one state of an endpoint to the
// next (after nil: deleted), of the fields its owner sets; never its secret,
// nor the credentials its URL may carry (user, password, query values: the
// record keeps logging.RedactURL's form, for a year, for every admin).
func webhookChanges(before, after *ent.WebhookEndpoint) map[string]Change {
	if after == nil {
		return map[string]Change{
			"url":         {Before: logging.RedactURL(before.URL)},
			"description": {Before: before.Description},
			"events":      {Before: before.Events},
			"active":      {Before: before.Active},
		}
	}
	out := map[string]Change{}
	if before.URL != after.URL {
		out["url"] = Change{logging.RedactURL(before.URL), logging.RedactURL(after.URL)}
	}
	if before.Description != after.Description {
		out["description"] = Change{before.Description, after.Description}
	}
	if !slices.Equal(before.Events, after.Events) {
		out["events"] = Change{before.Events, after.Events}
	}
	if before.Active != after.Active {
		out["active"] = Change{before.Active, after.Active}
	}
	return out
}
