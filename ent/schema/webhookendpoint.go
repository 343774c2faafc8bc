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

// WebhookEndpoint is a URL that receives signed item events of its owner's
// items (an admin's endpoint: of all items).
type WebhookEndpoint struct {
	ent.Schema
}

// Mixin of the WebhookEndpoint.
func (WebhookEndpoint) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("whk_"),
		TimeMixin{},
	}
}

// Fields of the WebhookEndpoint.
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").
			Immutable(),
		field.Text("url").
			Annotations(api.Format("uri"), api.Length(0, 2048),
				api.Request("http or https; must not resolve to a loopback, private, link-local or other special-purpose address that is not globally reachable.")),
		field.String("description").
			Default("").
			Annotations(api.Length(0, 500)),
		// The event types to send; empty means all of them.
		field.Strings("events").
			Default([]string{}).
			Annotations(webhookEvent(), api.Unique(),
				api.Describe("The events sent to the endpoint; empty: all of them."),
				api.Request("The events to send; empty: all. Duplicates are dropped.")),
		field.String("secret").
			Sensitive().
			Annotations(api.Once(), api.Pattern("^whsec_"),
				api.Describe("The signing secret (Standard Webhooks): shown only here.")),
		// After a rotation the previous secret keeps signing until it expires,
		// so receivers can switch without dropping deliveries.
		field.String("previous_secret").
			Optional().
			Sensitive(),
		field.Time("previous_secret_expires_at").
			Optional().
			Nillable().
			Annotations(api.Kept(),
				api.Describe("Until when the secret replaced by the last rotation still signs; null when none does.")),
		// false pauses the endpoint: its events wait as pending deliveries.
		field.Bool("active").
			Default(true).
			Annotations(api.Describe("false: paused, nothing is sent; the endpoint's events are kept as pending deliveries and sent in the order they were created once it is true again. Deliveries kept longer than 72 hours (or the retry schedule's span, if longer) fail with last_error saying so, and can be recovered. A 410 answer sets it to false.")),
		// Attempts that failed in a row, whatever their delivery; the first
		// success resets it. While it is above zero the endpoint gets one
		// attempt at a time, and at the breaker's threshold it backs off.
		field.Int("consecutive_failures").
			Default(0).
			Annotations(api.Kept(), api.Min(0),
				api.Describe("Attempts that failed in a row (any of its deliveries); the first success resets it. While above zero the endpoint gets one attempt at a time.")),
		// The circuit breaker: until then none of the endpoint's deliveries
		// is claimed. Set when the failures reach the threshold, each further
		// failure doubling the pause.
		field.Time("backoff_until").
			Optional().
			Nillable().
			Annotations(api.Kept(),
				api.Describe("The circuit breaker: after 5 failures in a row none of the endpoint's deliveries is attempted until then (1 minute, doubling with each further failure, at most 1 hour), then one probe goes; null when it is not holding them. Turning the endpoint back on, a retry or a recover lifts it.")),
	}
}

// Edges of the WebhookEndpoint.
func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", User.Type).
			Ref("webhook_endpoints").
			Field("user_id").
			Unique().
			Required().
			Immutable(),
		edge.To("deliveries", Delivery.Type),
	}
}

// Indexes of the WebhookEndpoint: by owner, newest first, for an owner's
// list and for the dispatcher, which looks up the endpoints of a batch's
// owners and of the admins (internal/webhook fanOut); without it both read
// every endpoint.
func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "created_at", "id"),
	}
}

// Annotations of the WebhookEndpoint.
func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
		api.Resource("Webhook"), api.List("listWebhooks", "webhook_"), api.NoSort(),
	}
}

// Policy of the WebhookEndpoint: owners manage their own endpoints, admins all.
func (WebhookEndpoint) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterOwner(),
		},
		Mutation: privacy.MutationPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.AllowCreateOwn(),
			rule.FilterOwner(),
		},
	}
}
