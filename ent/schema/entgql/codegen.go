//go:build entc

package entgql

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent/schema"
)

// SkipMode is entgql.SkipMode.
type SkipMode = entgql.SkipMode

// OrderField is entgql.OrderField.
func OrderField(name string) schema.Annotation { return entgql.OrderField(name) }

// Type is entgql.Type.
func Type(name string) schema.Annotation { return entgql.Type(name) }

// Skip is entgql.Skip.
func Skip(modes ...SkipMode) schema.Annotation { return entgql.Skip(modes...) }

// RelayConnection is entgql.RelayConnection.
func RelayConnection() schema.Annotation { return entgql.RelayConnection() }

// QueryField is entgql.QueryField.
func QueryField(name ...string) schema.Annotation { return entgql.QueryField(name...) }

// DescribedQueryField is entgql.QueryField().Description(text): the Query
// field with its description in the schema.
func DescribedQueryField(text string) schema.Annotation {
	return entgql.QueryField().Description(text)
}

// Mutations is entgql.Mutations with a create and an update input, each
// described: Create<Type>Input and Update<Type>Input in the schema and in
// package ent. ent/entc.go leaves out of both the fields a client may not
// set (ent/schema/api).
func Mutations(create, update string) schema.Annotation {
	return entgql.Mutations(entgql.MutationCreate().Description(create), entgql.MutationUpdate().Description(update))
}
