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

// User is a person who owns items, API keys and webhook endpoints.
type User struct {
	ent.Schema
}

// Mixin of the User.
func (User) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("user_"),
		TimeMixin{},
	}
}

// Fields of the User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		// Stored lowercased by the service, so the unique index is case-insensitive.
		named.Validate(field.String("email"), named.NotEmpty).
			Unique().
			Annotations(entgql.OrderField("EMAIL"),
				api.Format("email"), api.CreateOnly(),
				api.Request("Unique whatever its case (stored lowercased): one already taken is 400 VALIDATION_ERROR, field email, reason \"is already taken\"."),
				api.Filter("Only users whose email starts with this, in any case (emails are stored lowercased). At most 5000 characters, UTF-8, no NUL: else 400 VALIDATION_ERROR naming `email`.")),
		named.Validate(field.String("name"), named.NotEmpty).
			Annotations(entgql.OrderField("NAME"),
				api.Length(1, 0), api.Request("Not empty after trimming.")),
		field.Enum("role").
			Values("user", "admin").
			Default("user").
			// Named here as Item.status is (see there).
			Annotations(entgql.Type("UserRole"),
				api.Request("Another value is 400 VALIDATION_ERROR naming role. On update, admins only (a user: 403 PERMISSION_DENIED); the last enabled admin cannot be demoted: 400 VALIDATION_ERROR naming role."),
				api.Filter("Only users of this role. Another value is 400 VALIDATION_ERROR naming `role`.")),
		// A disabled user's keys do not log in and their tokens stop
		// within the key recheck; their items and history stay.
		field.Bool("disabled").
			Default(false).
			Annotations(api.NoCreate(),
				api.Describe("A disabled user's keys do not log in and their tokens stop working within 5 seconds; their items and history stay."),
				api.Request("Admins only. A disabled user's keys do not log in and their tokens stop within 5 seconds; the last enabled admin cannot be disabled: 400 VALIDATION_ERROR naming disabled."),
				api.Filter("Only disabled (`true`) or enabled (`false`) users. Another value is 400 VALIDATION_ERROR naming `disabled`.")),
	}
}

// Edges of the User.
func (User) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("items", Item.Type).
			Annotations(entgql.RelayConnection()),
		edge.To("api_keys", APIKey.Type).
			Annotations(entgql.Skip()),
		edge.To("webhook_endpoints", WebhookEndpoint.Type).
			Annotations(entgql.Skip()),
	}
}

// Indexes of the User: by role, for the few admins among many users (the
// webhook dispatcher's admins, whose endpoints receive every event).
func (User) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("role"),
	}
}

// Annotations of the User.
func (User) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.DescribedQueryField("Every user, for admins only: anyone else gets PERMISSION_DENIED (REST: GET /v1/users). " +
			"A page takes first or last, a whole number from 0 to 100, default 20."),
		entgql.RelayConnection(),
		// REST lists users oldest first, by page, with no sort parameter.
		api.Resource("User"), api.List("listUsers", "user_"), api.NoSort(),
	}
}

// Policy of the User: a user sees themselves, admins see everyone; users are
// created and changed by the system (the CLI, first start).
func (User) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterSelf(),
		},
		Mutation: privacy.MutationPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			privacy.AlwaysDenyRule(),
		},
	}
}
