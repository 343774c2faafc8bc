package graph

// internal/upstream holds the copied gqlgen code (post.go) to go.mod's
// gqlgen (third_party/UPSTREAM) before anything is generated.
//go:generate go run ../internal/upstream

// gqlgen.go runs gqlgen (as `go tool gqlgen` would) and then serializes list
// marshalling; see its doc comment.
//go:generate go run gqlgen.go
