package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/viewer"
)

// AuditAction names what an audit record records: REST's action strings,
// GraphQL's AuditAction enum in upper case.
type AuditAction string

// The actions of the audit trail (DESIGN §8).
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
)

// AuditActions lists every action, in the order the docs list them.
var AuditActions = []AuditAction{
	AuditUserCreated, AuditUserUpdated,
	AuditKeyCreated, AuditKeyUpdated, AuditKeyRevoked,
	AuditWebhookCreated, AuditWebhookUpdated, AuditWebhookDeleted, AuditWebhookSecretRotated,
	AuditDeliveryRetried, AuditDeliveriesRecovered,
}

// Valid reports whether a is one of AuditActions.
func (a AuditAction) Valid() bool {
	for _, b := range AuditActions {
		if a == b {
			return true
		}
	}
	return false
}

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
