package graph

// gqlgen.go runs gqlgen (as `go tool gqlgen` would) and then rewrites the
// executor's hot paths onto graph/serial; see its doc comment. -rewrite=off
// (or GQLGEN_REWRITE=off) keeps gqlgen's own executor: docs/development.md.
//go:generate go run gqlgen.go -rewrite=on
