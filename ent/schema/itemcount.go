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

// ItemCount is the number of items one user has in one status, kept exact by
// the Item hooks (itemcounts.go) in the transaction of every change, so that
// list totals are read from at most users×2 small rows instead of counting
// the items. It is internal: no GraphQL type, no prefixed id, no node.
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
		// Changed only by atomic increments (count = count + delta), never
		// by writing a value read before.
		field.Int("count").
			Default(0),
	}
}

// Indexes of the ItemCount: one row per owner and status, the target of the
// upsert.
func (ItemCount) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "status").
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
