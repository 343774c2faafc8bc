//go:build !entc

package entgql

import "entgo.io/ent/schema"

// SkipMode stands in for entgql.SkipMode.
type SkipMode int

// inert is the annotation of every function here: the server never reads
// annotations, which only shape generated code.
type inert struct{}

// Name implements schema.Annotation.
func (inert) Name() string { return "EntGQLInert" }

// OrderField stands in for entgql.OrderField.
func OrderField(string) schema.Annotation { return inert{} }

// Type stands in for entgql.Type.
func Type(string) schema.Annotation { return inert{} }

// Skip stands in for entgql.Skip.
func Skip(...SkipMode) schema.Annotation { return inert{} }

// RelayConnection stands in for entgql.RelayConnection.
func RelayConnection() schema.Annotation { return inert{} }

// QueryField stands in for entgql.QueryField.
func QueryField(...string) schema.Annotation { return inert{} }

// DescribedQueryField stands in for entgql.QueryField().Description.
func DescribedQueryField(string) schema.Annotation { return inert{} }

// Mutations stands in for entgql.Mutations.
func Mutations(string, string) schema.Annotation { return inert{} }
