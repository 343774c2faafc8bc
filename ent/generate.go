// Package ent holds the generated data layer; its hand-written sources are
// schema/**, entc.go, entc_runtime.go and template/. Run `go generate ./...`
// after changing a schema.
package ent

//go:generate go run entc.go entc_runtime.go
