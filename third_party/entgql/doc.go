// Package entgql is the run-time half of entgo.io/contrib/entgql: cursors,
// page info, order direction, the node-not-found error and the GraphQL
// transactioner, which the generated ent code and graph/ use.
//
// error.go, pagination.go and transaction.go are entgql's own files, copied
// by `go generate ./ent` (ent/entc.go) from the version in go.mod; never edit
// them. The copy exists because entgql keeps these helpers in the package of
// its code generator, and importing that package linked ent's generator,
// gqlgen's and golang.org/x/tools into the server. It is not under internal/:
// gqlgen drops the methods of a type aliased from an internal package, and ent's
// Cursor is an alias of this package's.
package entgql
