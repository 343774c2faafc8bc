package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/acme/itemsvc/ent/schema/api"
	"github.com/acme/itemsvc/ent/schema/entgql"
	"github.com/acme/itemsvc/ent/schema/named"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/schema/rule"
)

// Item is the resource of the API: a named thing owned by one user.
type Item struct {
	ent.Schema
}

// Mixin of the Item.
func (Item) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("item_"),
		TimeMixin{},
	}
}

// Bounds of an item's text fields, in characters (DESIGN §2): the service
// checks them and the OpenAPI document states them.
const (
	ItemNameMax        = 200
	ItemDescriptionMax = 5000
)

// Fields of the Item. Length bounds are checked (in characters, with clear
// messages) by the service layer; the validators here are the last line.
func (Item) Fields() []ent.Field {
	return []ent.Field{
		named.Validate(field.String("name"), named.NotEmpty).
			Comment("1–200 characters after trimming.").
			Annotations(entgql.OrderField("NAME"), api.Length(1, ItemNameMax), api.Trimmed()),
		field.Text("description").
			Default("").
			Comment("Up to 5000 characters; a new item's is empty unless set.").
			Annotations(api.Length(0, ItemDescriptionMax)),
		field.Enum("status").
			Values("active", "archived").
			Default("active").
			Comment("Whether the item is in use; a new item is active unless set.").
			// Named here because gqlgen.yml binds the enum (ent/entc.go
			// keeps @goModel out of the schema), and entgql would then
			// prefix the name twice (ItemItemStatus).
			// REST sorts by the indexed fields only (Indexes).
			Annotations(entgql.OrderField("STATUS"), entgql.Type("ItemStatus"),
				api.NoSort(), api.Filter("Only items in this status.")),
		field.String("user_id").
			Immutable().
			Annotations(api.Filter("Only items of this owner; non-admins may name only themselves (else 403).")),
		// version moves by one on every change (itemVersion), so it, not
		// updated_at's precision, tells one state of an item from the
		// next: it is the item's ETag (internal/service/etag.go). Not in
		// any API body and not settable: GraphQL shows it as Item.etag.
		field.Int("version").
			Default(1).
			Annotations(entgql.Skip(), api.Hidden()),
	}
}

// Edges of the Item.
func (Item) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", User.Type).
			Ref("items").
			Field("user_id").
			Unique().
			Required().
			Immutable(),
	}
}

// Indexes of the Item: one per sortable field, alone for admins and after the
// owner for everyone else, with id last so that ties page stably.
func (Item) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("created_at", "id"),
		index.Fields("updated_at", "id"),
		index.Fields("name", "id"),
		index.Fields("user_id", "created_at", "id"),
		index.Fields("user_id", "updated_at", "id"),
		index.Fields("user_id", "name", "id"),
	}
}

// Annotations of the Item.
func (Item) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.DescribedQueryField("The items the caller may see: their own, or everyone's for an admin (hasOwnerWith in where picks one owner's). " +
			"Newest first unless orderBy says otherwise. A page takes first or last, a whole number from 0 to 100, default 20, " +
			"as REST's limit takes 1 to 100; the page after this one starts after pageInfo.endCursor. " +
			"totalCount counts every item of the filter, not only this page's."),
		entgql.RelayConnection(),
		entgql.Mutations(
			"A new item, for createItem. A bad value is VALIDATION_ERROR naming the field in extensions.field, as on REST, an unknown status included.",
			"The changes to an item, for updateItem: a field that is absent (or null) stays as it is. "+
				"A bad value is VALIDATION_ERROR naming the field in extensions.field, as on REST, an unknown status included."),
		api.Resource("Item"), api.List("listItems", ""),
	}
}

// Hooks of the Item. The version moves first, so the change the later
// hooks see is the one written. The counters come next: for a status change or a
// delete they lock the rows the outbox hook then reads.
func (Item) Hooks() []ent.Hook {
	return []ent.Hook{
		itemVersion(),
		itemCounts(),
		itemEvents(),
	}
}

// Policy of the Item: owners read and change their own items, admins all.
func (Item) Policy() ent.Policy {
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
