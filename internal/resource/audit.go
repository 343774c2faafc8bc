package resource

import (
	"encoding/json"
	"time"

	"github.com/acme/itemsvc/ent"
)

// AuditEvent is a record of the audit trail as REST renders it (GET
// /v1/audit) and GraphQL's AuditEvent reads it.
type AuditEvent struct {
	ID string `json:"id"`
	// ActorID is the user who made the change; nil for the system (the
	// CLI, first start).
	ActorID  *string `json:"actor_id"`
	Action   string  `json:"action"`
	TargetID string  `json:"target_id"`
	// Changes holds {field: [before, after]} of the fields that changed,
	// each value as its JSON (null: absent). Never a secret, hash or key.
	Changes map[string][2]json.RawMessage `json:"changes"`
	// RequestID is the X-Request-ID of the request that made the change;
	// nil when there was none.
	RequestID *string   `json:"request_id"`
	Timestamp time.Time `json:"timestamp"`
}

// NewAuditEvent renders an audit record.
func NewAuditEvent(e *ent.AuditEvent) AuditEvent {
	changes := e.Changes
	if changes == nil {
		changes = map[string][2]json.RawMessage{}
	}
	return AuditEvent{
		ID:        e.ID,
		ActorID:   e.ActorID,
		Action:    e.Action,
		TargetID:  e.TargetID,
		Changes:   changes,
		RequestID: e.RequestID,
		Timestamp: e.CreatedAt,
	}
}
