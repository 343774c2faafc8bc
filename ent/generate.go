// Package ent holds the generated data layer; its hand-written sources are
// schema/** and entc.go. Run `go generate ./...` after changing a schema.
package ent

//go:generate go run entc.go
