package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"github.com/acme/itemsvc/ent/schema/entgql"
	"github.com/acme/itemsvc/ent/schema/named"

	"github.com/acme/itemsvc/ent/privacy"
)

// Setting is a named value that every replica must agree on, such as the
// token signing secret when JWT_SECRET is not configured.
type Setting struct {
	ent.Schema
}

// Mixin of the Setting.
func (Setting) Mixin() []ent.Mixin {
	return []ent.Mixin{
		TimeMixin{},
	}
}

// Fields of the Setting.
func (Setting) Fields() []ent.Field {
	return []ent.Field{
		named.Validate(field.String("id"), named.NotEmpty).
			Immutable(),
		field.Text("value").
			Sensitive(),
	}
}

// Annotations of the Setting.
func (Setting) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
	}
}

// Policy of the Setting: system only.
func (Setting) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{privacy.AlwaysDenyRule()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}
