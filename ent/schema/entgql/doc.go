// Package entgql gives the schemas entgql's annotations (entgo.io/contrib/entgql)
// when ent/entc.go loads them to generate code, and inert stand-ins otherwise.
//
// The annotations only shape generated code, yet the server links the schema
// package (ent/runtime takes its defaults, hooks and policies from it), and
// entgql's annotations live in the package of its code generator, which
// brings ent's generator, gqlgen's and golang.org/x/tools with it: tens of
// megabytes of binary and their init-time work. ent/entc.go loads the schemas
// with the build tag "entc", under which this package forwards to entgql
// (codegen.go); without it (runtime.go) every annotation is an empty value
// nothing reads. The names and signatures are entgql's, so a schema reads as
// if it imported entgql itself.
package entgql
