package schema

import (
	"encoding/json"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/acme/itemsvc/ent/schema/entgql"
	"github.com/acme/itemsvc/ent/schema/named"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/schema/rule"
)

// AuditEvent is one entry of the audit trail: who changed what, written in
// the transaction of the change (internal/service, audit.go). Entries are
// never changed; AUDIT_RETENTION prunes the old ones.
type AuditEvent struct {
	ent.Schema
}

// Mixin of the AuditEvent.
func (AuditEvent) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("aud_"),
	}
}

// Fields of the AuditEvent.
func (AuditEvent) Fields() []ent.Field {
	return []ent.Field{
		// The user who made the change; nil for the system (the CLI, first
		// start). No edge: the trail outlives what it names.
		field.String("actor_id").
			Optional().
			Nillable().
			Immutable(),
		// user.created, key.revoked, … (service.AuditAction).
		field.String("action").
			Immutable(),
		// The id of what changed (user_…, key_…, whk_…, dlv_…).
		field.String("target_id").
			Immutable(),
		// {field: [before, after]} of the fields that changed, each value
		// as its JSON (null: absent). Never a secret, hash or key.
		field.JSON("changes", map[string][2]json.RawMessage{}).
			Immutable(),
		// The X-Request-ID of the request that made the change; nil when
		// there was none (the CLI).
		field.String("request_id").
			Optional().
			Nillable().
			Immutable(),
		named.Default(field.Time("created_at"), Now).
			Immutable(),
	}
}

// Indexes of the AuditEvent: each list (everything, by actor, by action)
// reads newest first along one index, whatever the size of the table; the
// first also serves the retention pruning.
func (AuditEvent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("created_at", "id"),
		index.Fields("actor_id", "created_at", "id"),
		index.Fields("action", "created_at", "id"),
	}
}

// Annotations of the AuditEvent.
func (AuditEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
	}
}

// Policy of the AuditEvent: admins read the trail; only the service writes
// it (as the system), and nothing changes or deletes an entry but the
// retention pass (also the system).
func (AuditEvent) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			privacy.AlwaysDenyRule(),
		},
		Mutation: privacy.MutationPolicy{
			privacy.AlwaysDenyRule(),
		},
	}
}
