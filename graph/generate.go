package graph

// internal/upstream holds the copied gqlgen code (post.go) to go.mod's
// gqlgen (third_party/UPSTREAM) before anything is generated.
//go:generate go run ../internal/upstream

// gqlgen.go runs gqlgen (as `go tool gqlgen` would) and then rewrites the
// executor's hot paths onto graph/serial; see its doc comment. -rewrite=off
// (or GQLGEN_REWRITE=off) keeps gqlgen's own executor: docs/development.md.
//go:generate go run gqlgen.go -rewrite=on

// snapshot.go writes testdata/schema.graphql, the public schema as served.
//go:generate go run snapshot.go
