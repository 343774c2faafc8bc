package schema

import (
	"context"
	"time"

	"github.com/acme/itemsvc/ent/schema/entgql"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/acme/itemsvc/ent/hook"
	"github.com/acme/itemsvc/ent/schema/named"
)

// Now is the clock of stored timestamps: UTC, at the microsecond precision
// PostgreSQL keeps, so a value reads back exactly as it was written on both
// databases. Exported because the generated runtime assigns it by name
// (package named).
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// TimeMixin adds created_at and updated_at; updated_at moves on every update.
type TimeMixin struct {
	mixin.Schema
}

// Fields of the mixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		named.Default(field.Time("created_at"), Now).
			Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		named.UpdateDefault(named.Default(field.Time("updated_at"), Now), Now).
			Annotations(entgql.OrderField("UPDATED_AT")),
	}
}

// Annotations of the mixin: its type, for the generated runtime to take its
// hooks from (package named).
func (m TimeMixin) Annotations() []schema.Annotation {
	return []schema.Annotation{named.Mixin(m)}
}

// Hooks of the mixin: a new row's updated_at is exactly its created_at, not a
// microsecond later, so a client can tell an untouched row by equality.
func (TimeMixin) Hooks() []ent.Hook {
	return []ent.Hook{
		hook.On(func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				if v, ok := m.Field("created_at"); ok {
					if err := m.SetField("updated_at", v); err != nil {
						return nil, err
					}
				}
				return next.Mutate(ctx, m)
			})
		}, ent.OpCreate),
	}
}
