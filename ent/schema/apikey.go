package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/acme/itemsvc/ent/schema/api"
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
			Immutable().
			Annotations(api.CreateOnly(), api.Optional(),
				api.Describe("The owner."),
				api.Request("Another owner than the caller: admins only (anyone else: 403 PERMISSION_DENIED); an unknown user is 404 NOT_FOUND. The owner, the caller when absent, is the one MAX_KEYS_PER_USER counts (400 VALIDATION_ERROR naming user_id past it)."),
				api.Filter("Another user's keys: admins only; anyone else, or an unknown user: 404 NOT_FOUND.")),
		// REST shows, in place of the hash, the key itself, once: in the
		// answer to its creation.
		field.String("key_hash").
			Unique().
			Immutable().
			Sensitive().
			Annotations(api.Rename("key"), api.Once(), api.Pattern("^sk_"),
				api.Describe("The secret: shown only in this answer. Exchange it for tokens at POST /auth/login.")),
		// The first characters of the key, so that a person can tell keys apart.
		field.String("prefix").
			Immutable().
			Annotations(api.Describe("The first characters of the key, so that a person can tell keys apart.")),
		// A name its owner gives the key ("laptop", "CI"); may be empty.
		// The service checks its length, and the limits below.
		field.String("label").
			Default("").
			Annotations(api.Length(0, 100),
				api.Describe("A name its owner gave the key (\"laptop\", \"CI\"); may be empty."),
				api.Request("Up to 100 characters; on create, empty if absent.")),
		// What the key's tokens may do: "read" (REST GET, GraphQL queries
		// and subscriptions), "write" (everything else). New keys have both.
		field.Strings("scopes").
			Default([]string{"read", "write"}).
			Annotations(api.Enum("KeyScope", "read", "write"), api.Length(1, 0), api.Unique(), api.CreateOnly(),
				api.Describe("What the key's tokens may do: read (GET), write (every other method)."),
				api.Request("Absent: the scopes of the caller's key (both, unless it has fewer). Empty, an unknown scope or one the caller's key lacks: 400 VALIDATION_ERROR naming scopes.")),
		// Written at most once a minute per key, outside any request's
		// transaction (service.keyUse).
		field.Time("last_used_at").
			Optional().
			Nillable().
			Annotations(api.Kept(),
				api.Describe("When a token of the key was last used or the key logged in, written at most once a minute; null if never.")),
		// The key stops logging in then, and no token of it outlives it.
		// Set at creation; the service offers no way to move it.
		field.Time("expires_at").
			Optional().
			Nillable().
			Annotations(api.CreateOnly(),
				api.Describe("When the key stops logging in; no token of it outlives it. null: never."),
				api.Request("Must be in the future and no later than the caller's key's expiry (else 400 VALIDATION_ERROR naming expires_at); absent: the caller's key's expiry, or never when it has none.")),
		field.Time("revoked_at").
			Optional().
			Nillable().
			Annotations(api.Kept(),
				api.Describe("When the key was revoked; its tokens stop within 5 seconds. null: not revoked.")),
		// The key's own rate limits, set by admins; nil: the server's
		// RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_HOUR.
		field.Int("rate_limit_per_minute").
			Optional().
			Nillable().
			Annotations(api.NoCreate(), api.Range(1, 1000000),
				api.Describe("The key's own limit of requests (GraphQL: points) per minute; null: the server's RATE_LIMIT_PER_MINUTE."),
				api.Request("Admins only, even null (anyone else: 403 PERMISSION_DENIED). A whole number from 1 to 1000000; null: back to the server's default. Takes effect within 5 seconds.")),
		field.Int("rate_limit_per_hour").
			Optional().
			Nillable().
			Annotations(api.NoCreate(), api.Range(1, 1000000),
				api.Describe("The key's own limit per hour; null: the server's RATE_LIMIT_PER_HOUR."),
				api.Request("Admins only, as rate_limit_per_minute.")),
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
		// REST shows no updated_at: a key's changes are its label and
		// limits, and when it was revoked.
		api.Resource("APIKey"), api.List("listKeys", "key_"), api.NoSort(),
		api.Field("updated_at", api.Hidden()),
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
