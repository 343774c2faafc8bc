package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/acme/itemsvc/ent/schema/entgql"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/rule"
)

// ItemCount is a share of the number of items one user has in one status,
// kept exact by the Item hooks (itemcounts.go) in the transaction of every
// change, so that list totals are read from a few small rows instead of
// counting the items: the count of (user, status) is the sum of its slots.
// Writers add to one slot of several (on PostgreSQL), so that concurrent
// writes of one owner do not all queue on one row lock held to commit. It is
// internal: no GraphQL type, no prefixed id, no node.
type ItemCount struct {
	ent.Schema
}

// Fields of the ItemCount.
func (ItemCount) Fields() []ent.Field {
	return []ent.Field{
		// The owner of the counted items.
		field.String("user_id").
			Immutable(),
		// The status of the counted items (the values of Item.status).
		field.String("status").
			Immutable(),
		// Which of the counter rows of (user_id, status) this is: writers
		// spread over counterSlots of them on PostgreSQL; SQLite, with one
		// writer at a time, uses slot 0 only.
		field.Int("slot").
			Default(0).
			Immutable(),
		// Changed only by atomic increments (count = count + delta), never
		// by writing a value read before.
		field.Int("count").
			Default(0),
	}
}

// Indexes of the ItemCount: one row per owner, status and slot, the target
// of the upsert; its prefix serves the sums of one owner's slots.
func (ItemCount) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "status", "slot").
			Unique(),
	}
}

// Annotations of the ItemCount.
func (ItemCount) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
	}
}

// Policy of the ItemCount: written only by the item hooks (as the system),
// read like the items it counts: admins all rows, everyone else their own.
func (ItemCount) Policy() ent.Policy {
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
