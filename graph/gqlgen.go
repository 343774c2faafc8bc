//go:build ignore

// Command gqlgen generates the GraphQL executor (graph/generated), models and
// resolver stubs as `go tool gqlgen` does, from gqlgen.yml, then points every
// list of objects at serial.MarshalSlice instead of gqlgen's
// graphql.MarshalSliceConcurrently (see package graph/serial for why).
//
// gqlgen has no option for this: its exec template marshals every list of
// non-scalars with one goroutine per element, and worker_limit only bounds
// how many run at once (it still starts one per element and adds a
// semaphore). Rewriting the call here keeps the generated code reproducible
// by `go generate ./...` and never edited by hand.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
	"golang.org/x/tools/go/ast/astutil"
)

const serialPkg = "github.com/acme/itemsvc/graph/serial"

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		log.Fatalf("gqlgen: load config: %v", err)
	}
	if err := api.Generate(cfg); err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(cfg.Exec.Dir(), "*.go"))
	if err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
	total := 0
	for _, f := range files {
		n, err := serialLists(f)
		if err != nil {
			log.Fatalf("gqlgen: %s: %v", f, err)
		}
		total += n
	}
	if total == 0 {
		log.Fatalf("gqlgen: no graphql.MarshalSliceConcurrently call found: has gqlgen's exec template changed?")
	}
}

// serialLists rewrites graphql.MarshalSliceConcurrently(…) into
// serial.MarshalSlice(…), same arguments, in one generated file, and
// returns how many calls it rewrote.
func serialLists(path string) (int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return 0, err
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "graphql" && sel.Sel.Name == "MarshalSliceConcurrently" {
			pkg.Name, sel.Sel.Name = "serial", "MarshalSlice"
			n++
		}
		return true
	})
	if n == 0 {
		return 0, nil
	}
	astutil.AddImport(fset, f, serialPkg)
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return 0, fmt.Errorf("format: %w", err)
	}
	return n, os.WriteFile(path, buf.Bytes(), 0o644)
}
