package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/viewer"
)

// AuditAction names what an audit record records: REST's action strings,
// GraphQL's AuditAction enum in upper case.
type AuditAction string

// The actions of the audit trail (DESIGN §8), and those of the backups
// admins make through the API (backups.go).
const (
	AuditUserCreated          AuditAction = "user.created"
	AuditUserUpdated          AuditAction = "user.updated"
	AuditKeyCreated           AuditAction = "key.created"
	AuditKeyUpdated           AuditAction = "key.updated"
	AuditKeyRevoked           AuditAction = "key.revoked"
	AuditWebhookCreated       AuditAction = "webhook.created"
	AuditWebhookUpdated       AuditAction = "webhook.updated"
	AuditWebhookDeleted       AuditAction = "webhook.deleted"
	AuditWebhookSecretRotated AuditAction = "webhook.secret_rotated"
	AuditDeliveryRetried      AuditAction = "delivery.retried"
	AuditDeliveriesRecovered  AuditAction = "deliveries.recovered"
	AuditItemUpdated          AuditAction = "item.updated"
	AuditItemDeleted          AuditAction = "item.deleted"
	AuditBackupCreated        AuditAction = "backup.created"
	AuditBackupDownloaded     AuditAction = "backup.downloaded"
	AuditBackupDeleted        AuditAction = "backup.deleted"
)

// AuditActions lists every action, in the order the docs list them.
var AuditActions = []AuditAction{
	AuditUserCreated, AuditUserUpdated,
	AuditKeyCreated, AuditKeyUpdated, AuditKeyRevoked,
	AuditWebhookCreated, AuditWebhookUpdated, AuditWebhookDeleted, AuditWebhookSecretRotated,
	AuditDeliveryRetried, AuditDeliveriesRecovered,
	AuditItemUpdated, AuditItemDeleted,
	AuditBackupCreated, AuditBackupDownloaded, AuditBackupDeleted,
}

// Valid reports whether a is one of AuditActions.
func (a AuditAction) Valid() bool { return slices.Contains(AuditActions, a) }

// Change is one changed field: its value before and after (nil: absent).
type Change struct{ Before, After any }

type requestIDKey struct{}

// WithRequestID returns a copy of ctx that carries the request's id
// (X-Request-ID), which the audit records of its changes keep.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestID is the request id of ctx, or nil when it has none (the CLI).
func requestID(ctx context.Context) *string {
	if id, _ := ctx.Value(requestIDKey{}).(string); id != "" {
		return &id
	}
	return nil
}

// recordAudit writes one audit record in tx: actor from ctx's viewer (nil =
// system), request id from ctx. Call it inside the same transaction as the
// change, so that a change that rolls back leaves no record and a recorded
// change cannot be lost. The write itself runs as the system: the trail is
// written by the service, whoever the viewer is.
func (s *Service) recordAudit(ctx context.Context, tx *ent.Tx, action AuditAction, targetID string, changes map[string]Change) error {
	enc := make(map[string][2]json.RawMessage, len(changes))
	for field, c := range changes {
		var pair [2]json.RawMessage
		for i, v := range [2]any{c.Before, c.After} {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("audit %s: encode %s: %w", action, field, err)
			}
			pair[i] = b
		}
		enc[field] = pair
	}
	c := tx.AuditEvent.Create().
		SetAction(string(action)).
		SetTargetID(targetID).
		SetChanges(enc).
		SetNillableRequestID(requestID(ctx))
	if v, ok := viewer.FromContext(ctx); ok {
		c.SetActorID(v.UserID)
	}
	if err := c.Exec(system(ctx)); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// AuditParams select one page of the audit trail, newest first.
type AuditParams struct {
	Limit int
	// After is the page cursor: the records older than this one.
	After *Keyset
	// ActorID keeps one user's changes; Action one action. "": any.
	ActorID string
	Action  AuditAction
	// Count asks for Total, which costs a count of every matching record
	// (GraphQL's totalCount, asked for by name); a page alone reads one
	// index range.
	Count bool
}

// AuditPage is one page of the audit trail, newest first. Next is the
// cursor of the next (older) page, nil on the last. More reports records
// after the page (with a Limit of 0, the one case where Next stays nil).
type AuditPage struct {
	Events []*ent.AuditEvent
	Next   *Keyset
	More   bool
	Total  int
}

// CheckAuditActor refuses an actor filter (actor_id) that is not a user
// id: no record could match it.
func CheckAuditActor(id string) error {
	if !pulid.Valid("user_", id) {
		return apperr.Validation("actor_id", "must be a user id (user_…)")
	}
	return nil
}

// ParseAuditAction checks an action filter (action).
func ParseAuditAction(v string) (AuditAction, error) {
	if a := AuditAction(v); a.Valid() {
		return a, nil
	}
	names := make([]string, len(AuditActions))
	for i, a := range AuditActions {
		names[i] = string(a)
	}
	return "", apperr.Validation("action", "must be one of: "+strings.Join(names, ", "))
}

// ListAudit returns one page of the audit trail, newest first: admins
// only (PERMISSION_DENIED for others). The page is one query along the
// index of its filter (ent/schema, auditevent.go), whatever the size of the
// trail.
func (s *Service) ListAudit(ctx context.Context, p AuditParams) (AuditPage, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return AuditPage{}, err
	}
	if !v.Admin() {
		return AuditPage{}, apperr.PermissionDenied("only admins may read the audit trail")
	}
	q := s.reads(ctx).AuditEvent.Query()
	if p.ActorID != "" {
		q.Where(auditevent.ActorID(p.ActorID))
	}
	if p.Action != "" {
		q.Where(auditevent.Action(string(p.Action)))
	}
	var out AuditPage
	if p.Count {
		if out.Total, err = q.Clone().Count(ctx); err != nil {
			return AuditPage{}, fmt.Errorf("count audit events: %w", err)
		}
	}
	if k := p.After; k != nil {
		q.Where(k.older())
	}
	rows, err := q.
		Order(auditevent.ByCreatedAt(sql.OrderDesc()), auditevent.ByID(sql.OrderDesc())).
		Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return AuditPage{}, fmt.Errorf("list audit events: %w", err)
	}
	out.Events, out.More = cut(rows, p.Limit)
	if out.More && len(out.Events) > 0 {
		last := out.Events[len(out.Events)-1]
		out.Next = &Keyset{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, nil
}
