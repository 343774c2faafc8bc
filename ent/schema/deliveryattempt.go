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

// DeliveryAttempt is one HTTP attempt of a delivery, kept as its log: what the
// receiver answered (or why there was no answer) and how long it took.
type DeliveryAttempt struct {
	ent.Schema
}

// Mixin of the DeliveryAttempt.
func (DeliveryAttempt) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("att_"),
		TimeMixin{},
	}
}

// Fields of the DeliveryAttempt.
func (DeliveryAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("delivery_id").
			Immutable().
			Annotations(api.Hidden()),
		// 1 for the first attempt of the delivery.
		field.Int("number").
			Immutable().
			Annotations(api.Min(1)),
		// Absent when no answer came (refused address, timeout, reset).
		field.Int("status_code").
			Optional().
			Nillable().
			Immutable().
			Annotations(api.Min(100), api.Describe("null when no answer came (timeout, refused connection).")),
		field.String("error").
			Default("").
			Immutable(),
		field.Int("duration_ms").
			Immutable().
			Annotations(api.Min(0)),
	}
}

// Edges of the DeliveryAttempt.
func (DeliveryAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", Delivery.Type).
			Ref("attempt_log").
			Field("delivery_id").
			Unique().
			Required().
			Immutable(),
	}
}

// Indexes of the DeliveryAttempt.
func (DeliveryAttempt) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("delivery_id", "number"),
	}
}

// Annotations of the DeliveryAttempt.
func (DeliveryAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
		// REST shows an attempt inside its delivery (attempt_log), by its
		// number and time.
		api.Resource("DeliveryAttempt"), api.ReadOnly(),
		api.Field("id", api.Hidden()), api.Field("created_at", api.Rename("at")), api.Field("updated_at", api.Hidden()),
	}
}

// Policy of the DeliveryAttempt: written only by the dispatcher (as the
// system); read by the owner of the endpoint.
func (DeliveryAttempt) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterAttemptOwner(),
		},
		Mutation: privacy.MutationPolicy{
			privacy.AlwaysDenyRule(),
		},
	}
}
