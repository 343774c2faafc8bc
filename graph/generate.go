package graph

// gqlgen.go runs gqlgen (as `go tool gqlgen` would) and then serializes list
// marshalling; see its doc comment.
//go:generate go run gqlgen.go
