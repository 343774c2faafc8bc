package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/acme/itemsvc/ent/schema/api"
	"github.com/acme/itemsvc/ent/schema/entgql"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/schema/rule"
)

// Delivery is one event on its way to one endpoint, with its retry state.
type Delivery struct {
	ent.Schema
}

// Mixin of the Delivery.
func (Delivery) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("dlv_"),
		TimeMixin{},
	}
}

// Fields of the Delivery.
func (Delivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("endpoint_id").
			Immutable().
			Annotations(api.Rename("webhook_id")),
		field.String("event_id").
			Immutable().
			Annotations(api.Describe("Also the webhook-id header of every attempt.")),
		field.Enum("state").
			Values("pending", "succeeded", "failed").
			Default("pending").
			Annotations(api.Filter("Only deliveries in this state.")),
		field.Int("attempts").
			Default(0).
			Annotations(api.Min(0)),
		// REST shows it only while the delivery is pending
		// (internal/resource): null otherwise.
		field.Time("next_attempt_at").
			Annotations(api.Nullable(), api.Describe("When the next attempt is due; null unless pending.")),
		// A dispatcher that claims the delivery owns it until then; a crashed
		// dispatcher's claims lapse and another picks the delivery up.
		field.Time("claimed_until").
			Optional().
			Nillable().
			Annotations(api.Hidden()),
		field.Int("last_status_code").
			Optional().
			Nillable().
			Annotations(api.Min(100),
				api.Describe("The HTTP status of the last attempt; null before any, or when it got no answer.")),
		field.String("last_error").
			Optional().
			Annotations(api.Describe("Why the last attempt failed; empty if it did not.")),
		field.Int("last_duration_ms").
			Optional().
			Nillable().
			Annotations(api.Min(0)),
	}
}

// Edges of the Delivery.
func (Delivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).
			Ref("deliveries").
			Field("endpoint_id").
			Unique().
			Required().
			Immutable(),
		edge.From("event", Event.Type).
			Ref("deliveries").
			Field("event_id").
			Unique().
			Required().
			Immutable().
			Annotations(api.Of("type")),
		edge.To("attempt_log", DeliveryAttempt.Type).
			Annotations(api.Length(0, 20), api.Describe("The latest attempts, newest first.")),
	}
}

// Indexes of the Delivery.
func (Delivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("state", "next_attempt_at"),
		index.Fields("endpoint_id", "created_at"),
		// Per endpoint: the next waiting deliveries, bulk recovery, and the
		// attempts in flight (claimed_until), which claims count.
		index.Fields("endpoint_id", "state", "next_attempt_at"),
		index.Fields("endpoint_id", "claimed_until"),
		// The deliveries of an event: retention (internal/retention) prunes
		// by event, and deleting an event checks its foreign key here,
		// which without an index reads the whole table for every event.
		index.Fields("event_id"),
	}
}

// Annotations of the Delivery.
func (Delivery) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
		api.Resource("Delivery"), api.List("listDeliveries", ""), api.ReadOnly(), api.NoSort(),
	}
}

// Policy of the Delivery: changed only by the dispatcher (as the system).
// Readers reach deliveries through an endpoint they may read.
func (Delivery) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterDeliveryOwner(),
		},
		Mutation: privacy.MutationPolicy{
			privacy.AlwaysDenyRule(),
		},
	}
}
