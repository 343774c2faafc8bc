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

// Event is the transactional outbox: one row per item change, written in the
// transaction of the change by the Item hooks, later fanned out to deliveries.
type Event struct {
	ent.Schema
}

// Mixin of the Event.
func (Event) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("evt_"),
		TimeMixin{},
	}
}

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		// item.created, item.updated or item.deleted.
		field.String("type").
			Immutable().
			Annotations(api.Rename("event"), webhookEvent(),
				api.FilterList("type", "Comma-separated event types to keep (item.created, item.updated, item.deleted); absent: all.")),
		// The owner of the item, which decides the endpoints that receive it.
		field.String("user_id").
			Immutable().
			Annotations(api.Hidden()),
		field.String("item_id").
			Immutable().
			Annotations(api.Hidden()),
		// The item as the API renders it, kept as the exact JSON text to send.
		field.Text("data").
			Immutable().
			Annotations(api.Ref("Item"), api.Describe("The item as the change left it; for item.deleted, as it was.")),
		// The transaction that wrote the event, on PostgreSQL: its
		// pg_current_xact_id() (64 bits, never wraps). Feeds order events
		// by (xid, seq) and show only those of transactions older than
		// every one still open (internal/events, order.go), so that no
		// event ever appears before one already shown. 0 on SQLite, whose
		// writers are serial, and on events from before the column.
		field.Int64("xid").
			Default(0).
			Immutable().
			Annotations(api.Hidden()),
		// The order of the event within (xid, seq): on SQLite the commit
		// order, taken from the settings counter while the writer holds
		// the database's write lock; on PostgreSQL a number from the
		// sequence event_seq, taken without a lock (ent/schema,
		// itemevents.go). Unique either way.
		field.Int64("seq").
			Immutable().
			Annotations(api.Hidden()),
		// Set once the event has been turned into deliveries.
		field.Time("dispatched_at").
			Optional().
			Nillable().
			Annotations(api.Hidden()),
		// The W3C traceparent of the traced request whose transaction
		// wrote the event, when tracing recorded it: the spans of its
		// deliveries link to it (internal/webhook, tracing.go), on
		// whichever replica they run. Empty otherwise.
		field.String("trace_parent").
			Optional().
			Immutable().
			Annotations(api.Hidden()),
	}
}

// Edges of the Event.
func (Event) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", Delivery.Type),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("dispatched_at", "created_at"),
		// The feed order, and the cursor's position in it.
		index.Fields("xid", "seq").Unique(),
	}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
		// REST's event (and webhook payload) is {id, event, data, timestamp}.
		api.Resource("Event"), api.List("listEvents", "event_"), api.ReadOnly(), api.NoSort(),
		api.Field("id", api.Describe("The event id, the same as in webhooks.")),
		api.Field("created_at", api.Rename("timestamp")), api.Field("updated_at", api.Hidden()),
	}
}

// Policy of the Event: written only by the item hooks (as the system), read
// by the owner of the item.
func (Event) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterOwner(),
		},
		Mutation: privacy.MutationPolicy{
			privacy.AlwaysDenyRule(),
		},
	}
}

// webhookEvent names the enum of the event types on REST (WebhookEvent): an
// event's type, a webhook endpoint's events.
func webhookEvent() api.Annotation {
	return api.Enum("WebhookEvent", EventItemCreated, EventItemUpdated, EventItemDeleted)
}
