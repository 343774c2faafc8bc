package schema

import (
	"encoding/json"
	"github.com/acme/itemsvc/ent/schema/api"

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
			Immutable().
			Annotations(api.Pattern("^user_"),
				api.Describe("The user who made the change; null for the system (the CLI, first start)."),
				api.Filter("Only the changes this user made. Not a user id: 400 VALIDATION_ERROR naming `actor_id`.")),
		// user.created, key.revoked, … (service.AuditAction; rest's
		// TestAuditActionsDocumented holds the enum below to it).
		field.String("action").
			Immutable().
			Annotations(api.Enum("AuditAction",
				"user.created", "user.updated",
				"key.created", "key.updated", "key.revoked",
				"webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret_rotated",
				"delivery.retried", "deliveries.recovered",
				"item.updated", "item.deleted",
				"backup.created", "backup.downloaded", "backup.deleted"),
				api.Filter("Only the records of this action. Another value is 400 VALIDATION_ERROR naming `action`.")),
		// The id of what changed (user_…, key_…, whk_…, dlv_…).
		field.String("target_id").
			Immutable().
			Annotations(api.Describe("The id of what changed: a user (user_…), API key (key_…), webhook (whk_…), delivery (dlv_…) or item (item_…); for a backup, its file name.")),
		// {field: [before, after]} of the fields that changed, each value
		// as its JSON (null: absent). Never a secret, hash or key.
		field.JSON("changes", map[string][2]json.RawMessage{}).
			Immutable().
			Annotations(api.Schema(`{"type": "object", "additionalProperties": {"type": "array", "minItems": 2, "maxItems": 2}}`),
				api.Describe("The fields that changed, each as [before, after] (null: absent). Never a secret, hash or key: a secret rotation records none, and a webhook url is kept with its user, password and query values REDACTED.")),
		// The X-Request-ID of the request that made the change; nil when
		// there was none (the CLI).
		field.String("request_id").
			Optional().
			Nillable().
			Immutable().
			Annotations(api.Describe("The X-Request-ID of the request that made the change; null when there was none (the CLI).")),
		named.Default(field.Time("created_at"), Now).
			Immutable().
			Annotations(api.Rename("timestamp")),
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
		api.Resource("AuditEvent"), api.List("listAuditEvents", "audit_"), api.ReadOnly(),
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
