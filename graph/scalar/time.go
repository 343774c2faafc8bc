// Package scalar holds the GraphQL scalars whose wire format the contract
// fixes. It is apart from package graph because the generated executor
// imports it and package graph imports the executor.
package scalar

import (
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalTime writes a timestamp as REST does: RFC 3339 with nanoseconds, in
// UTC with Z, so that the two transports return identical values whatever
// zone the database driver hands back.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.MarshalTime(t.UTC())
}

// UnmarshalTime reads an RFC 3339 timestamp (filters such as createdAtGT).
func UnmarshalTime(v any) (time.Time, error) {
	return graphql.UnmarshalTime(v)
}
