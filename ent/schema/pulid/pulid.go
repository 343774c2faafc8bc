// Package pulid gives every entity a prefixed, time-sortable identifier
// ("item_01j…"): a type prefix followed by a lowercase ULID. The prefix tells
// the type of a bare id, which resolves Relay node(id) and makes ids in logs
// and support tickets self-describing.
package pulid

import (
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/ent/schema/named"
)

// New returns a fresh id with the given prefix (which includes the trailing "_").
func New(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}

// Valid reports whether id has the prefix and the shape of an id made by New.
// It lets callers answer malformed ids without a database round trip.
func Valid(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil
}

// Mixin adds the prefixed string id field to a schema.
type Mixin struct {
	mixin.Schema
	prefix string
}

// MixinWithPrefix returns the id mixin for a type whose ids start with prefix.
func MixinWithPrefix(prefix string) Mixin {
	return Mixin{prefix: prefix}
}

// Fields adds the id. Its default is a closure over the prefix, which
// generated code cannot name, so the id field also carries the Annotation:
// ent/entc_runtime.go generates the same default, New(prefix), from it.
func (m Mixin) Fields() []ent.Field {
	return []ent.Field{
		named.Validate(field.String("id"), named.NotEmpty).
			Immutable().
			DefaultFunc(func() string { return New(m.prefix) }).
			Annotations(Annotation{Prefix: m.prefix}),
	}
}

// Annotations records the prefix for the code generator (see template/pulid.tmpl).
func (m Mixin) Annotations() []schema.Annotation {
	return []schema.Annotation{Annotation{Prefix: m.prefix}}
}

// Annotation carries an entity's id prefix into code generation: on the
// schema for the prefix table (template/pulid.tmpl), on the id field for its
// default (entc_runtime.go).
type Annotation struct {
	Prefix string
}

// Name implements schema.Annotation.
func (Annotation) Name() string { return "PULID" }
