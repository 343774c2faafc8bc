// Package ent holds the generated data layer; its hand-written sources are
// schema/**, entc.go, entc_runtime.go and template/. Run `go generate ./...`
// after changing a schema.
package ent

// The copies of upstream files (third_party/UPSTREAM) are checked against
// go.mod first: an upgraded module stops generation until they are re-diffed.
//go:generate go run ../internal/upstream
//go:generate go run entc.go entc_runtime.go entc_rest.go
