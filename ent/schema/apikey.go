package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/acme/itemsvc/ent/schema/entgql"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/schema/rule"
)

// APIKey is a long-lived credential that a client exchanges for access tokens.
// Only the SHA-256 hash of the key is stored; the key itself is shown once.
type APIKey struct {
	ent.Schema
}

// Mixin of the APIKey.
func (APIKey) Mixin() []ent.Mixin {
	return []ent.Mixin{
		pulid.MixinWithPrefix("key_"),
		TimeMixin{},
	}
}

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").
			Immutable(),
		field.String("key_hash").
			Unique().
			Immutable().
			Sensitive(),
		// The first characters of the key, so that a person can tell keys apart.
		field.String("prefix").
			Immutable(),
		// A name its owner gives the key ("laptop", "CI"); may be empty.
		// The service checks its length, and the limits below.
		field.String("label").
			Default(""),
		// What the key's tokens may do: "read" (REST GET, GraphQL queries
		// and subscriptions), "write" (everything else). New keys have both.
		field.Strings("scopes").
			Default([]string{"read", "write"}),
		// Written at most once a minute per key, outside any request's
		// transaction (service.keyUse).
		field.Time("last_used_at").
			Optional().
			Nillable(),
		// The key stops logging in then, and no token of it outlives it.
		// Set at creation; the service offers no way to move it.
		field.Time("expires_at").
			Optional().
			Nillable(),
		field.Time("revoked_at").
			Optional().
			Nillable(),
		// The key's own rate limits, set by admins; nil: the server's
		// RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_HOUR.
		field.Int("rate_limit_per_minute").
			Optional().
			Nillable(),
		field.Int("rate_limit_per_hour").
			Optional().
			Nillable(),
	}
}

// Edges of the APIKey.
func (APIKey) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", User.Type).
			Ref("api_keys").
			Field("user_id").
			Unique().
			Required().
			Immutable(),
	}
}

// Annotations of the APIKey.
func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
	}
}

// Policy of the APIKey: keys are checked and managed by the system (login, the
// CLI); a user may read their own.
func (APIKey) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			rule.FilterOwner(),
		},
		Mutation: privacy.MutationPolicy{
			rule.DenyIfNoViewer(),
			rule.AllowIfAdmin(),
			privacy.AlwaysDenyRule(),
		},
	}
}
