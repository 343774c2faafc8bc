//go:build ignore

// Command gqlgen generates the GraphQL executor (graph/generated), models and
// resolver stubs as `go tool gqlgen` does, from gqlgen.yml, then points every
// list of objects at serial.MarshalSlice instead of gqlgen's
// graphql.MarshalSliceConcurrently, and every scalar field read straight from
// its object at serial.Value instead of graphql.ResolveField (see package
// graph/serial for why).
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
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
	gqlast "github.com/vektah/gqlparser/v2/ast"
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
	total, values := 0, 0
	for _, f := range files {
		n, v, err := rewrite(f, cfg.Schema)
		if err != nil {
			log.Fatalf("gqlgen: %s: %v", f, err)
		}
		total += n
		values += v
	}
	if total == 0 {
		log.Fatalf("gqlgen: no graphql.MarshalSliceConcurrently call found: has gqlgen's exec template changed?")
	}
	if values == 0 {
		log.Fatalf("gqlgen: no scalar field read from its object found: has gqlgen's exec template changed?")
	}
}

// rewrite rewrites one generated file: graphql.MarshalSliceConcurrently(…)
// into serial.MarshalSlice(…), same arguments, and the graphql.ResolveField
// call of a scalar field read straight from its object into serial.Value. It
// returns how many calls of each it rewrote.
func rewrite(path string, schema *gqlast.Schema) (int, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return 0, 0, err
	}
	n, values := 0, 0
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && plainScalar(fn, schema) {
			values++
		}
	}
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
	if n == 0 && values == 0 {
		return 0, 0, nil
	}
	astutil.AddImport(fset, f, serialPkg)
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return 0, 0, fmt.Errorf("format: %w", err)
	}
	return n, values, os.WriteFile(path, buf.Bytes(), 0o644)
}

// plainScalar rewrites the body of a generated field function
// `_Type_field(ctx, field, obj)` whose value is a scalar or enum read
// straight from obj, with no directive:
//
//	return graphql.ResolveField(ctx, ec.OperationContext, field, fc,
//		func(ctx context.Context) (any, error) { return obj.X, nil },
//		nil, marshal, true, nonNull)
//
// into `return serial.Value(ctx, field, obj.X, marshal)`, and reports
// whether it did.
func plainScalar(fn *ast.FuncDecl, schema *gqlast.Schema) bool {
	if fn.Recv == nil || fn.Body == nil || len(fn.Body.List) != 1 || !strings.HasPrefix(fn.Name.Name, "_") {
		return false
	}
	name := fn.Name.Name[1:]
	cut := strings.LastIndex(name, "_")
	if cut <= 0 {
		return false
	}
	def := schema.Types[name[:cut]]
	if def == nil {
		return false
	}
	fd := def.Fields.ForName(name[cut+1:])
	if fd == nil || schema.Types[fd.Type.Name()] == nil {
		return false
	}
	if k := schema.Types[fd.Type.Name()].Kind; k != gqlast.Scalar && k != gqlast.Enum {
		return false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 9 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "ResolveField" {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "graphql" {
		return false
	}
	if mw, ok := call.Args[5].(*ast.Ident); !ok || mw.Name != "nil" {
		return false // a directive wraps the field
	}
	resolver, ok := call.Args[4].(*ast.FuncLit)
	if !ok || len(resolver.Body.List) != 1 {
		return false
	}
	body, ok := resolver.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(body.Results) != 2 {
		return false
	}
	value, ok := body.Results[0].(*ast.SelectorExpr)
	if !ok {
		return false // a method call, a resolver: may fail
	}
	if obj, ok := value.X.(*ast.Ident); !ok || obj.Name != "obj" {
		return false
	}
	if nilErr, ok := body.Results[1].(*ast.Ident); !ok || nilErr.Name != "nil" {
		return false
	}
	// New nodes without positions, so that the printer lays the call out on
	// one line rather than where the dropped arguments were.
	ret.Results[0] = &ast.CallExpr{
		Fun: &ast.SelectorExpr{X: ast.NewIdent("serial"), Sel: ast.NewIdent("Value")},
		Args: []ast.Expr{
			ast.NewIdent("ctx"), ast.NewIdent("field"),
			&ast.SelectorExpr{X: ast.NewIdent("obj"), Sel: ast.NewIdent(value.Sel.Name)},
			call.Args[6],
		},
	}
	return true
}
