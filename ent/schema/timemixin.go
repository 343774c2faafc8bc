package schema

import (
	"time"

	"entgo.io/contrib/entgql"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// now is the clock of stored timestamps: UTC, at the microsecond precision
// PostgreSQL keeps, so a value reads back exactly as it was written on both
// databases.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// TimeMixin adds created_at and updated_at; updated_at moves on every update.
type TimeMixin struct {
	mixin.Schema
}

// Fields of the mixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").
			Immutable().
			Default(now).
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").
			Default(now).
			UpdateDefault(now).
			Annotations(entgql.OrderField("UPDATED_AT")),
	}
}
