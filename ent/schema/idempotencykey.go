package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/acme/itemsvc/ent/schema/entgql"

	"github.com/acme/itemsvc/ent/privacy"
)

// IdempotencyKey records a request sent with an Idempotency-Key header
// (DESIGN §7): claimed (state running) in its own short statement before the
// change runs, so that a concurrent request with the same key sees it, then
// marked done with the response in the transaction of the change itself, so
// that the change and its record commit together or not at all. It is
// internal: no GraphQL type, no prefixed id, written and read only by the
// service as the system.
type IdempotencyKey struct {
	ent.Schema
}

// Fields of the IdempotencyKey. None has a default: the service sets every
// one, and the generated runtime stays free of them.
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		// The caller: keys are scoped to a user.
		field.String("user_id").
			Immutable(),
		// The client's key, up to 255 characters (checked by the service).
		field.String("key").
			Immutable(),
		// SHA-256 (hex) of the request: method, route and canonical body,
		// or for GraphQL the query, operation name and variables.
		field.String("fingerprint").
			Immutable(),
		// running while the first request works; done once its change
		// committed with its response.
		field.String("state"),
		// A random token of the request that holds the claim: only that
		// request may mark it done, so a claim taken over after a crash
		// is never completed twice.
		field.String("claim"),
		// The role of the caller whose request made the change (user or
		// admin): a replay is served only to a caller who still has it, so
		// that what an admin's request answered never reaches the same
		// user once demoted. Empty on records made before it was kept.
		field.String("role").
			Optional(),
		// The recorded response: HTTP status, body (JSON, or deflated
		// JSON in base64 behind a marker, never more than
		// service.MaxIdempotentRecord bytes; no secret a response showed:
		// the service writes null in its place), and its Location and
		// ETag headers.
		field.Int("status").
			Optional(),
		field.Text("body").
			Optional(),
		field.String("location").
			Optional(),
		field.String("etag").
			Optional(),
		field.Time("created_at").
			Immutable(),
		// When the current claim was taken: a running claim older than the
		// request timeout and a margin belongs to a request that can no
		// longer finish (a crash), and may be taken over.
		field.Time("claimed_at"),
		// When the record may be pruned and the key used afresh
		// (IDEMPOTENCY_KEY_TTL after the first request).
		field.Time("expires_at"),
	}
}

// Indexes of the IdempotencyKey: one record per user and key, which is what
// makes a concurrent claim fail; expires_at for the pruner.
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "key").
			Unique(),
		index.Fields("expires_at"),
	}
}

// Annotations of the IdempotencyKey.
func (IdempotencyKey) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(),
	}
}

// Policy of the IdempotencyKey: nobody but the system (the service, which
// checks the caller itself) reads or writes it.
func (IdempotencyKey) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			privacy.AlwaysDenyRule(),
		},
		Mutation: privacy.MutationPolicy{
			privacy.AlwaysDenyRule(),
		},
	}
}
