// Package gqlrewrite rewrites the hot paths of gqlgen's generated executor
// (graph/generated) onto package graph/serial, which says why for each:
//   - every list of objects marshalled by serial.MarshalSlice instead of
//     graphql.MarshalSliceConcurrently, on the calling goroutine;
//   - every scalar field read straight from its object by serial.Value
//     instead of graphql.ResolveField, and strings, times and enums of a
//     loaded object through a pointer to them (serial.String, serial.Time,
//     &obj.Field), which costs no allocation;
//   - every object field read straight from its object by serial.Field;
//   - the edge fields of objects (resolvers gqlgen runs in a goroutine
//     each) resolved in place, ent's field collection having loaded them;
//   - every object's resolved fields written by serial.Object instead of
//     gqlgen's FieldSet, with the deferred-fragment bookkeeping done only
//     when a fragment can be deferred, and no FieldSet at all for an object
//     whose fields all resolve in place (serial.Fields);
//   - fields collected through serial.CollectFields, the response's data
//     written into a pooled buffer (serial.Buffer).
//
// docs/ablation.md measures what each kind buys; a kind stays only while
// what it buys is worth its code, and GQLGEN_REWRITE_SKIP (graph/gqlgen.go)
// measures one again.
//
// gqlgen has no option for this: its exec template marshals every list of
// non-scalars with one goroutine per element, and worker_limit only bounds
// how many run at once (it still starts one per element and adds a
// semaphore). Rewriting the code at generation (graph/gqlgen.go) keeps it
// reproducible by `go generate ./...` and never edited by hand.
//
// The rewrite matches the private shape of gqlgen's templates, which an
// upgrade may change. So that such a change fails generation rather than
// silently leaving a function on gqlgen's path, Rewrite first picks, for
// each kind of rewrite, every function it should apply to by a loose
// criterion (every object's marshaller, every field read from its object,
// …: candidates), and reports every candidate the precise match then
// missed, by function and kind (Miss). GQLGEN_REWRITE=off skips the whole
// rewrite (graph/gqlgen.go): the server runs on gqlgen's own executor.
package gqlrewrite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	gqlast "github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/tools/go/ast/astutil"
)

const serialPkg = "github.com/acme/itemsvc/graph/serial"

// Kind is one kind of rewrite.
type Kind string

// The kinds of rewrite, each with the gqlgen template site it matches.
const (
	// List: a graphql.MarshalSliceConcurrently call, into serial.MarshalSlice.
	List Kind = "list"
	// Collect: a graphql.CollectFields call, into serial.CollectFields.
	Collect Kind = "collect fields"
	// Buffer: the `var buf bytes.Buffer; data.MarshalGQL(&buf)` of an Exec,
	// into serial.Buffer.
	Buffer Kind = "response buffer"
	// Scalar: a `_Type_field` function returning graphql.ResolveField(…)
	// with nine arguments whose resolver is `return obj.X, nil`, for a
	// scalar or enum, into serial.Value.
	Scalar Kind = "scalar field"
	// ScalarRef: a Scalar field of a non-null String, ID, Time or
	// self-marshalling enum of a pointer obj, read through a pointer
	// (serial.String, serial.Time, serial.Enum; matched by the marshaller's
	// mangled name, such as marshalNTime2timeᚐTime).
	ScalarRef Kind = "scalar field by reference"
	// ObjectField: a Scalar-shaped function for an object, into serial.Field.
	ObjectField Kind = "object field"
	// Object: an object marshaller `_Type(ctx, sel, obj)` ending with
	// atomic.AddInt32, ec.ProcessDeferredGroup and `return out`, into
	// serial.Object or serial.Fields.
	Object Kind = "object marshaller"
	// InPlace: an object marshaller's `innerFunc(ctx, fs)` and
	// `out.Concurrently(…)`, resolved in the loop instead.
	InPlace Kind = "field resolved in place"
)

// Kinds lists every kind, in the order of a report.
var Kinds = []Kind{List, Collect, Buffer, Scalar, ScalarRef, ObjectField, Object, InPlace}

// exceptions are the candidates the rewrite leaves alone on purpose, by
// "function kind", with the reason.
var exceptions = map[string]string{}

// Miss is a candidate site of a kind that the rewrite did not match: the
// generated code no longer has the shape the rewrite expects there.
type Miss struct {
	File, Func string
	Kind       Kind
}

// MissError lists every missed candidate, and every kind that matched
// nothing at all: generation fails with it.
type MissError struct {
	Misses []Miss
	Empty  []Kind
}

// Error implements error, one line per miss, naming the function and kind.
func (e *MissError) Error() string {
	var b strings.Builder
	b.WriteString("the gqlgen executor rewrite (graph/internal/gqlrewrite) no longer matches gqlgen's generated code; " +
		"update the rewrite for this gqlgen, or generate with GQLGEN_REWRITE=off:")
	for _, m := range e.Misses {
		fmt.Fprintf(&b, "\n\t%s: func %s: %s not rewritten", m.File, m.Func, m.Kind)
	}
	for _, k := range e.Empty {
		fmt.Fprintf(&b, "\n\tno %s rewritten anywhere", k)
	}
	return b.String()
}

// Report lists, per kind, the functions rewritten ("file: func"), sorted.
type Report map[Kind][]string

// Marker is the method the rewrite adds to the generated executableSchema
// so that the server can tell a rewritten executor from gqlgen's own
// (graph.Rewritten).
const Marker = "SerialFastPaths"

// Rewrite rewrites the generated executor files srcs (by base name) and
// returns the rewritten sources, what was rewritten, and a *MissError if any
// candidate site was missed (the sources are then not to be written).
//
// The kinds in skip are not applied, nor expected (a kind that another
// one is part of goes with it: ScalarRef with Scalar, InPlace with Object);
// they serve to measure what each kind buys (docs/ablation.md).
func Rewrite(srcs map[string][]byte, schema *gqlast.Schema, skip ...Kind) (map[string][]byte, Report, error) {
	off := skipped(skip)
	names := make([]string, 0, len(srcs))
	for name := range srcs {
		names = append(names, name)
	}
	sort.Strings(names)
	fset := token.NewFileSet()
	files := make([]*ast.File, len(names))
	for i, name := range names {
		f, err := parser.ParseFile(fset, name, srcs[name], parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		files[i] = f
	}
	out := map[string][]byte{}
	report := Report{}
	missed := &MissError{}
	identities := identityMarshallers(files)
	for i, f := range files {
		changed := false
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			want := candidates(fn, schema, identities)
			got := rewriteFunc(fn, schema, identities, off)
			for _, k := range Kinds {
				if off[k] {
					continue
				}
				if got[k] > 0 {
					report[k] = append(report[k], names[i]+": "+fn.Name.Name)
					changed = true
				}
				if got[k] < want[k] && exceptions[fn.Name.Name+" "+string(k)] == "" {
					missed.Misses = append(missed.Misses, Miss{File: names[i], Func: fn.Name.Name, Kind: k})
				}
			}
		}
		if !changed {
			out[names[i]] = srcs[names[i]]
			continue
		}
		astutil.AddImport(fset, f, serialPkg)
		for _, imp := range []string{"bytes", "math", "sync/atomic"} {
			if !astutil.UsesImport(f, imp) {
				astutil.DeleteImport(fset, f, imp)
			}
		}
		var buf bytes.Buffer
		if err := format.Node(&buf, fset, f); err != nil {
			return nil, nil, fmt.Errorf("%s: format: %w", names[i], err)
		}
		if declaresType(f, "executableSchema") {
			buf.WriteString(marker)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: format: %w", names[i], err)
		}
		out[names[i]] = src
	}
	for _, k := range Kinds {
		if len(report[k]) == 0 && !off[k] {
			missed.Empty = append(missed.Empty, k)
		}
		sort.Strings(report[k])
	}
	if len(missed.Misses) > 0 || len(missed.Empty) > 0 {
		return nil, report, missed
	}
	return out, report, nil
}

// skipped is the set of kinds skip leaves out, with the kinds that are
// part of them.
func skipped(skip []Kind) map[Kind]bool {
	off := map[Kind]bool{}
	for _, k := range skip {
		off[k] = true
	}
	off[ScalarRef] = off[ScalarRef] || off[Scalar]
	off[InPlace] = off[InPlace] || off[Object]
	return off
}

// marker is the source of the Marker method.
const marker = `
// ` + Marker + ` reports that graph/internal/gqlrewrite rewrote this executor
// onto graph/serial: fields read from their objects skip field middleware,
// and the response's data is written into a buffer of serial's pool.
func (e *executableSchema) ` + Marker + `() bool { return true }
`

// declaresType reports whether f declares the type name.
func declaresType(f *ast.File, name string) bool {
	for _, decl := range f.Decls {
		if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.TYPE {
			for _, spec := range gen.Specs {
				if spec.(*ast.TypeSpec).Name.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// rewriteFunc applies every rewrite to fn and returns how many sites of
// each kind it rewrote (one at most for the kinds of whole functions).
func rewriteFunc(fn *ast.FuncDecl, schema *gqlast.Schema, identities map[string]bool, off map[Kind]bool) map[Kind]int {
	got := map[Kind]int{}
	if off[Scalar] {
		// left to gqlgen
	} else if ok, byRef := plainScalar(fn, schema, identities, !off[ScalarRef]); ok {
		got[Scalar], got[ScalarRef] = 1, one(byRef)
	}
	if got[Scalar] == 0 && !off[ObjectField] && plainObject(fn, schema) {
		got[ObjectField] = 1
	}
	concurrent := callsMethod(fn.Body, "out", "Concurrently")
	if !off[Object] && objectTail(fn, !off[InPlace]) {
		got[Object] = 1
		got[InPlace] = one(concurrent && !rootType(fn.Name.Name[1:]) && !callsMethod(fn.Body, "out", "Concurrently"))
	}
	if !off[Buffer] {
		got[Buffer] = responseBuffers(fn.Body)
	}
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && !off[List] && pkg.Name == "graphql" && sel.Sel.Name == "MarshalSliceConcurrently" {
				pkg.Name, sel.Sel.Name = "serial", "MarshalSlice"
				got[List]++
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && !off[Collect] && pkg.Name == "graphql" && sel.Sel.Name == "CollectFields" {
				pkg.Name = "serial"
				got[Collect]++
			}
		}
		return true
	})
	return got
}

// one is 1 if b, else 0.
func one(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rootType reports whether name is one of the operation types, whose
// marshallers keep their fields concurrent (mutations run in order by
// gqlgen's own code; a query's root fields are independent loads).
func rootType(name string) bool {
	return name == "Query" || name == "Mutation" || name == "Subscription"
}

// candidates picks the kinds of rewrite fn should take by criteria looser
// than the rewrites' own matches, from the schema and the loosest traits
// of the templates, so that a template change shows as a Miss rather than
// as a function left on gqlgen's path: how many sites of each kind fn
// holds (one at most for the kinds of whole functions).
func candidates(fn *ast.FuncDecl, schema *gqlast.Schema, identities map[string]bool) map[Kind]int {
	want := map[Kind]int{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "MarshalSliceConcurrently":
				want[List]++
			case "CollectFields":
				want[Collect]++
			}
		}
		return true
	})
	want[Buffer] = bufferSites(fn.Body)
	if fn.Recv == nil || !strings.HasPrefix(fn.Name.Name, "_") || strings.HasPrefix(fn.Name.Name, "___") {
		return want // gqlgen's introspection types: rewritten where they match, never required
	}
	name := fn.Name.Name[1:]
	if def := schema.Types[name]; def != nil && def.Kind == gqlast.Object && name != "Subscription" {
		// Every object's marshaller; the subscription's streams its
		// root field rather than building an object.
		want[Object] = 1
		want[InPlace] = one(!rootType(name) && callsAnyMethod(fn.Body, "Concurrently"))
		return want
	}
	cut := strings.LastIndex(name, "_")
	if cut <= 0 {
		return want
	}
	def := schema.Types[name[:cut]]
	if def == nil {
		return want
	}
	fd := def.Fields.ForName(name[cut+1:])
	if fd == nil || schema.Types[fd.Type.Name()] == nil {
		return want
	}
	read, method := readsObj(fn.Body)
	if !read {
		return want // a resolver's field: its value may fail
	}
	switch schema.Types[fd.Type.Name()].Kind {
	case gqlast.Scalar, gqlast.Enum:
		want[Scalar] = 1
		if !method && fd.Type.NonNull && objPointer(fn) {
			switch t := schema.Types[fd.Type.Name()]; {
			case t.Name == "String" || t.Name == "ID" || t.Name == "Time":
				want[ScalarRef] = 1
			case t.Kind == gqlast.Enum:
				want[ScalarRef] = one(slices.ContainsFunc(marshallersCalled(fn.Body), func(m string) bool { return identities[m] }))
			}
		}
	case gqlast.Object:
		want[ObjectField] = one(!method)
	}
	return want
}

// bufferSites counts the calls X.MarshalGQL(&buf) in body: the Exec of an
// operation renders its root's data into a buffer of its own. A buffer a
// function literal resets (a subscription's, reused for every event) is not
// one: its data must not go back to the pool while the stream still writes
// into it.
func bufferSites(body *ast.BlockStmt) int {
	n := 0
	ast.Inspect(body, func(node ast.Node) bool {
		switch node := node.(type) {
		case *ast.FuncLit:
			return !callsAnyMethod(node.Body, "Reset")
		case *ast.CallExpr:
			if sel, ok := node.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "MarshalGQL" && len(node.Args) == 1 {
				if u, ok := node.Args[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
					n++
				}
			}
		}
		return true
	})
	return n
}

// readsObj reports whether a function literal in body returns a value
// read from obj (`return obj.X, …` or `return obj.X(), …`), and whether
// by a method call.
func readsObj(body *ast.BlockStmt) (read, method bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			ret, ok := n.(*ast.ReturnStmt)
			if !ok || len(ret.Results) == 0 {
				return true
			}
			e := ret.Results[0]
			if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 0 {
				e, method = c.Fun, true
			}
			if sel, ok := e.(*ast.SelectorExpr); ok && isIdent(sel.X, "obj") {
				read = true
			} else {
				method = false
			}
			return !read
		})
		return !read
	})
	return read, read && method
}

// marshallersCalled lists the ec methods body calls.
func marshallersCalled(body *ast.BlockStmt) []string {
	var names []string
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "ec") {
				names = append(names, sel.Sel.Name)
			}
		}
		return true
	})
	return names
}

// callsAnyMethod reports whether body calls a method name of anything.
func callsAnyMethod(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// Dir rewrites the generated executor files of dir in place, after
// copying them as gqlgen wrote them into snapshot (as name.txt, replacing
// what was there): the tests rewrite that copy and compare the result with
// dir, so that neither drifts from the other. On a miss, nothing in dir is
// rewritten: it keeps gqlgen's own output, and the snapshot is the output
// the rewrite is to be brought up to (its tests then show the misses).
func Dir(dir, snapshot string, schema *gqlast.Schema, skip ...Kind) (Report, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no generated file in %s", dir)
	}
	old, err := filepath.Glob(filepath.Join(snapshot, "*.txt"))
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(snapshot, 0o755); err != nil {
		return nil, err
	}
	srcs := map[string][]byte{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		srcs[filepath.Base(p)] = src
		if err := os.WriteFile(filepath.Join(snapshot, filepath.Base(p)+".txt"), src, 0o644); err != nil {
			return nil, err
		}
	}
	out, report, err := Rewrite(srcs, schema, skip...)
	if err != nil {
		return report, err
	}
	for name, src := range out {
		if !bytes.Equal(src, srcs[name]) {
			if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
				return report, err
			}
		}
	}
	return report, nil
}

// plainObject rewrites the body of a generated field function
// `_Type_field(ctx, field, obj)` whose value is an object read straight
// from obj, with no directive (an edge's node, a connection's page info):
//
//	return graphql.ResolveField(ctx, ec.OperationContext, field, fc,
//		func(ctx context.Context) (any, error) { return obj.X, nil },
//		nil, marshal, recover, nonNull)
//
// into `return serial.Field(ctx, ec.OperationContext, field, "Type", fc,
// obj.X, marshal, recover)`, and reports whether it did. "Type" is what fc
// sets as the field context's Object: Field makes the field contexts of a
// list's elements from the first one's, for the same type and field.
func plainObject(fn *ast.FuncDecl, schema *gqlast.Schema) bool {
	fd := schemaField(fn, schema)
	if fd == nil || schema.Types[fd.Type.Name()].Kind != gqlast.Object {
		return false
	}
	call, value, method := plainResolve(fn)
	if call == nil || method {
		return false
	}
	fn.Body.List[0].(*ast.ReturnStmt).Results[0] = invoke(dot("serial", "Field"),
		call.Args[0], call.Args[1], call.Args[2], call.Args[3],
		dot("obj", value),
		call.Args[6], call.Args[7])
	return true
}

// schemaField is the schema field a generated `_Type_field` function
// resolves, or nil.
func schemaField(fn *ast.FuncDecl, schema *gqlast.Schema) *gqlast.FieldDefinition {
	if fn.Recv == nil || fn.Body == nil || len(fn.Body.List) != 1 || !strings.HasPrefix(fn.Name.Name, "_") {
		return nil
	}
	name := fn.Name.Name[1:]
	cut := strings.LastIndex(name, "_")
	if cut <= 0 {
		return nil
	}
	def := schema.Types[name[:cut]]
	if def == nil {
		return nil
	}
	fd := def.Fields.ForName(name[cut+1:])
	if fd == nil || schema.Types[fd.Type.Name()] == nil {
		return nil
	}
	return fd
}

// plainResolve returns the graphql.ResolveField call that fn's body
// returns and the name of the obj field its resolver returns, when the
// resolver is `return obj.X, nil` and no directive wraps the field; or the
// name of the obj method, and method true, when it is `return obj.X(),
// nil`: a method of no arguments and no error, which gqlgen binds when the
// model has one rather than a field (an edge's Cursor, made when asked).
func plainResolve(fn *ast.FuncDecl) (call *ast.CallExpr, value string, method bool) {
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, "", false
	}
	call, ok = ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 9 {
		return nil, "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "ResolveField" || !isIdent(sel.X, "graphql") {
		return nil, "", false
	}
	if !isIdent(call.Args[5], "nil") {
		return nil, "", false // a directive wraps the field
	}
	resolver, ok := call.Args[4].(*ast.FuncLit)
	if !ok || len(resolver.Body.List) != 1 {
		return nil, "", false
	}
	body, ok := resolver.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(body.Results) != 2 || !isIdent(body.Results[1], "nil") {
		return nil, "", false
	}
	result := body.Results[0]
	if m, ok := result.(*ast.CallExpr); ok && len(m.Args) == 0 {
		result, method = m.Fun, true
	}
	v, ok := result.(*ast.SelectorExpr)
	if !ok || !isIdent(v.X, "obj") {
		return nil, "", false // a resolver: may fail
	}
	return call, v.Sel.Name, method
}

// objectTail rewrites the end of a generated object marshaller
// `_Type(ctx, sel[, obj])`, which resolves the selected fields into
// `out := graphql.NewFieldSet(fields)` and then ends with
//
//	atomic.AddInt32(&ec.Deferred, …len(deferLabelToView)…)
//	ec.ProcessDeferredGroup(graphql.DeferredGroup{…, Path: graphql.GetPath(ctx), …})
//	return out
//
// into
//
//	if len(deferLabelToView) > 0 {
//		atomic.AddInt32(…)
//		ec.ProcessDeferredGroup(…)
//	}
//	return serial.Object(fields, out.Values)
//
// (`return out.Object(fields)` where the values are in a serial.Fields),
// or, for a type none of whose fields can be deferred, into the return
// alone, without the deferred field set and map declared for nothing.
// ProcessDeferredGroup returns at once when nothing is deferred, but its
// argument builds the field's whole path first; and serial.Object writes
// the same JSON as the FieldSet without its per-object map and per-field
// copies. It reports whether it rewrote fn.
func objectTail(fn *ast.FuncDecl, resolveInPlace bool) bool {
	if fn.Recv == nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "_") || strings.Contains(fn.Name.Name[1:], "_") {
		return false
	}
	list := fn.Body.List
	if len(list) < 4 {
		return false
	}
	ret, ok := list[len(list)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 || !isIdent(ret.Results[0], "out") {
		return false
	}
	add, process := list[len(list)-3], list[len(list)-2]
	if !isCall(add, "atomic", "AddInt32") || !isCall(process, "ec", "ProcessDeferredGroup") {
		return false
	}
	object := &ast.ReturnStmt{Results: []ast.Expr{invoke(dot("serial", "Object"),
		ast.NewIdent("fields"),
		dot("out", "Values"))}}
	// An object whose values are in a serial.Fields is written from the
	// allocation that holds them.
	fieldsObject := &ast.ReturnStmt{Results: []ast.Expr{invoke(dot("out", "Object"), ast.NewIdent("fields"))}}
	if fn.Name.Name != "_Query" && fn.Name.Name != "_Mutation" && fn.Name.Name != "_Subscription" && resolveInPlace && inPlace(fn.Body) {
		// The object's resolver fields now resolve in the loop too.
		for _, st := range list {
			if declares(st, "out") {
				st.(*ast.AssignStmt).Rhs = []ast.Expr{newFields()}
				object = fieldsObject
			}
		}
	}
	if !defers(fn.Body) {
		// No field of this type can be deferred: the bookkeeping is dead.
		kept := make([]ast.Stmt, 0, len(list))
		for _, st := range list[:len(list)-3] {
			if !declares(st, "deferredFieldSet") && !declares(st, "deferLabelToView") {
				kept = append(kept, st)
			}
		}
		if !callsMethod(fn.Body, "out", "Concurrently") {
			// Every field resolves in the loop: the field set only holds
			// values, which a serial.Fields on the stack does too.
			for _, st := range kept {
				if declares(st, "out") {
					st.(*ast.AssignStmt).Rhs = []ast.Expr{newFields()}
					object = fieldsObject
				}
			}
		}
		fn.Body.List = append(kept, object)
		return true
	}
	lazyDeferMap(fn.Body)
	list[len(list)-3] = &ast.IfStmt{
		Cond: &ast.BinaryExpr{
			X:  invoke(ast.NewIdent("len"), ast.NewIdent("deferLabelToView")),
			Op: token.GTR,
			Y:  &ast.BasicLit{Kind: token.INT, Value: "0"},
		},
		Body: &ast.BlockStmt{List: []ast.Stmt{add, process}},
	}
	list[len(list)-2] = object
	fn.Body.List = list[:len(list)-1]
	return true
}

// lazyDeferMap turns `deferLabelToView := make(map[…]…)` and
// `deferredFieldSet := graphql.NewFieldSet(nil)` into nil declarations and
// makes them in each `if field.IsDeferred() {…}` block, the only place they
// are written: an object of which nothing is deferred (every item of a
// page) then makes neither.
func lazyDeferMap(body *ast.BlockStmt) {
	for i, st := range body.List {
		if !declares(st, "deferLabelToView") {
			continue
		}
		mk, ok := st.(*ast.AssignStmt).Rhs[0].(*ast.CallExpr)
		if !ok || !isIdent(mk.Fun, "make") || len(mk.Args) != 1 {
			return
		}
		body.List[i] = &ast.DeclStmt{Decl: &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{
			&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent("deferLabelToView")}, Type: mk.Args[0]},
		}}}
		lazySet := false
		for j, st := range body.List {
			if declares(st, "deferredFieldSet") {
				body.List[j] = &ast.DeclStmt{Decl: &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{
					&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent("deferredFieldSet")}, Type: &ast.StarExpr{X: dot("graphql", "FieldSet")}},
				}}}
				lazySet = true
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			ifs, ok := n.(*ast.IfStmt)
			if !ok {
				return true
			}
			call, ok := ifs.Cond.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "IsDeferred" {
				return true
			}
			init := []ast.Stmt{&ast.IfStmt{
				Cond: &ast.BinaryExpr{X: ast.NewIdent("deferLabelToView"), Op: token.EQL, Y: ast.NewIdent("nil")},
				Body: &ast.BlockStmt{List: []ast.Stmt{&ast.AssignStmt{
					Lhs: []ast.Expr{ast.NewIdent("deferLabelToView")},
					Tok: token.ASSIGN,
					Rhs: []ast.Expr{invoke(ast.NewIdent("make"), mk.Args[0])},
				}}},
			}}
			if lazySet {
				// Made on first use; the block's closures capture a copy
				// that is never reassigned, so that the function's own
				// variable stays off the heap.
				init = append(init,
					&ast.IfStmt{
						Cond: &ast.BinaryExpr{X: ast.NewIdent("deferredFieldSet"), Op: token.EQL, Y: ast.NewIdent("nil")},
						Body: &ast.BlockStmt{List: []ast.Stmt{&ast.AssignStmt{
							Lhs: []ast.Expr{ast.NewIdent("deferredFieldSet")},
							Tok: token.ASSIGN,
							Rhs: []ast.Expr{invoke(dot("graphql", "NewFieldSet"), ast.NewIdent("nil"))},
						}}},
					},
					&ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("deferredFieldSet")}, Tok: token.DEFINE, Rhs: []ast.Expr{ast.NewIdent("deferredFieldSet")}},
				)
			}
			ifs.Body.List = append(init, ifs.Body.List...)
			return true
		})
		return
	}
}

// defers reports whether body asks any field `field.IsDeferred()`: only
// then can its deferred group be other than empty.
func defers(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "IsDeferred" {
				found = true
			}
		}
		return !found
	})
	return found
}

// newFields is `serial.NewFields(ctx, len(fields))`.
func newFields() ast.Expr {
	return invoke(dot("serial", "NewFields"), ast.NewIdent("ctx"), invoke(ast.NewIdent("len"), ast.NewIdent("fields")))
}

// inPlace rewrites, in an object marshaller (not a root type's), every
// field gqlgen resolves concurrently to resolve in the loop instead:
//
//	innerFunc := func(ctx context.Context, fs *graphql.FieldSet) (res graphql.Marshaler) {
//		… atomic.AddUint32(&fs.Invalids, 1) …
//	}
//	… innerFunc(ctx, deferredFieldSet) …
//	out.Concurrently(i, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })
//
// into an innerFunc counting into `fs *uint32`, called with
// &deferredFieldSet.Invalids, and `out.Values[i] = innerFunc(ctx,
// &out.Invalids)`. Such a field (an item's owner, a user's items) is an ent
// edge that field collection has already loaded with the page: a goroutine
// per object and field only cost, as for list elements (MarshalSlice). Once
// nothing runs concurrently, the object's values fit in a serial.Fields. It
// reports whether it rewrote anything; it leaves fn alone if the shape is
// not the one expected.
func inPlace(body *ast.BlockStmt) bool {
	changed := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || !isIdent(as.Lhs[0], "innerFunc") {
			return true
		}
		lit, ok := as.Rhs[0].(*ast.FuncLit)
		if !ok || len(lit.Type.Params.List) != 2 {
			return true
		}
		fs := lit.Type.Params.List[1]
		if len(fs.Names) != 1 || fs.Names[0].Name != "fs" {
			return true
		}
		fs.Type = &ast.StarExpr{X: ast.NewIdent("uint32")}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || !isIdent(sel.X, "atomic") || sel.Sel.Name != "AddUint32" {
				return true
			}
			call.Args[0] = ast.NewIdent("fs")
			return true
		})
		changed = true
		return true
	})
	if !changed {
		return false
	}
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !isIdent(call.Fun, "innerFunc") || len(call.Args) != 2 {
			return true
		}
		if set, ok := call.Args[1].(*ast.Ident); ok {
			call.Args[1] = &ast.UnaryExpr{Op: token.AND, X: &ast.SelectorExpr{X: set, Sel: ast.NewIdent("Invalids")}}
		}
		return true
	})
	replace := func(list []ast.Stmt) {
		for i, st := range list {
			es, ok := st.(*ast.ExprStmt)
			if !ok || !isCall(es, "out", "Concurrently") {
				continue
			}
			call := es.X.(*ast.CallExpr)
			lit, ok := call.Args[1].(*ast.FuncLit)
			if !ok || len(lit.Body.List) != 1 {
				continue
			}
			ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			list[i] = &ast.AssignStmt{
				Lhs: []ast.Expr{&ast.IndexExpr{X: dot("out", "Values"), Index: call.Args[0]}},
				Tok: token.ASSIGN,
				Rhs: []ast.Expr{ret.Results[0]},
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch b := n.(type) {
		case *ast.BlockStmt:
			replace(b.List)
		case *ast.CaseClause:
			replace(b.Body)
		}
		return true
	})
	return !callsMethod(body, "out", "Concurrently")
}

// callsMethod reports whether body calls x.name(…) anywhere.
func callsMethod(body *ast.BlockStmt, x, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if es, ok := n.(*ast.ExprStmt); ok && isCall(es, x, name) {
			found = true
		}
		return !found
	})
	return found
}

// declares reports whether s is `name := …`.
func declares(s ast.Stmt, name string) bool {
	as, ok := s.(*ast.AssignStmt)
	return ok && as.Tok == token.DEFINE && len(as.Lhs) == 1 && isIdent(as.Lhs[0], name)
}

// responseBuffers rewrites, in the generated Exec, each
//
//	var buf bytes.Buffer
//	data.MarshalGQL(&buf)
//
// into `buf := serial.Buffer()` and `data.MarshalGQL(buf)`: the data of a
// response is written into a buffer of the pool that the POST transport
// returns it to once written, rather than into one grown from 64 bytes by
// doubling on every request. It returns how many it rewrote.
func responseBuffers(f ast.Node) int {
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		block, ok := node.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i := 0; i+1 < len(block.List); i++ {
			decl, ok := block.List[i].(*ast.DeclStmt)
			if !ok {
				continue
			}
			gen, ok := decl.Decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR || len(gen.Specs) != 1 {
				continue
			}
			spec, ok := gen.Specs[0].(*ast.ValueSpec)
			if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "buf" || len(spec.Values) != 0 {
				continue
			}
			typ, ok := spec.Type.(*ast.SelectorExpr)
			if !ok || !isIdent(typ.X, "bytes") || typ.Sel.Name != "Buffer" {
				continue
			}
			es, ok := block.List[i+1].(*ast.ExprStmt)
			if !ok || !isCall(es, "data", "MarshalGQL") {
				continue
			}
			call := es.X.(*ast.CallExpr)
			if len(call.Args) != 1 {
				continue
			}
			if u, ok := call.Args[0].(*ast.UnaryExpr); !ok || u.Op != token.AND || !isIdent(u.X, "buf") {
				continue
			}
			block.List[i] = &ast.AssignStmt{
				Lhs: []ast.Expr{ast.NewIdent("buf")},
				Tok: token.DEFINE,
				Rhs: []ast.Expr{invoke(dot("serial", "Buffer"))},
			}
			call.Args[0] = ast.NewIdent("buf")
			n++
		}
		return true
	})
	return n
}

// dot is the expression x.name.
func dot(x, name string) *ast.SelectorExpr {
	return &ast.SelectorExpr{X: ast.NewIdent(x), Sel: ast.NewIdent(name)}
}

// invoke is the call fun(args…).
func invoke(fun ast.Expr, args ...ast.Expr) *ast.CallExpr {
	return &ast.CallExpr{Fun: fun, Args: args}
}

// isIdent reports whether e is the identifier name.
func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isCall reports whether s is the statement `x.name(…)`.
func isCall(s ast.Stmt, x, name string) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	return ok && isSelector(call.Fun, x, name)
}

// isSelector reports whether e is x.name.
func isSelector(e ast.Expr, x, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, x) && sel.Sel.Name == name
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
// whether it did, and whether it reads the value through a pointer to it
// (String, Time, Enum, &obj.X). A value returned by a method of obj with no arguments and
// no error (`return obj.X(), nil`: an edge's Cursor) is read the same way,
// `serial.Value(ctx, field, obj.X(), marshal)`; such a method is the
// model's own code and does not panic, but if it did, the panic would be
// recovered by the list element's or the operation's guard, not the
// field's.
func plainScalar(fn *ast.FuncDecl, schema *gqlast.Schema, identities map[string]bool, refs bool) (ok, byRef bool) {
	fd := schemaField(fn, schema)
	if fd == nil {
		return false, false
	}
	if k := schema.Types[fd.Type.Name()].Kind; k != gqlast.Scalar && k != gqlast.Enum {
		return false, false
	}
	call, value, method := plainResolve(fn)
	if call == nil {
		return false, false
	}
	if method && strings.HasPrefix(fn.Name.Name, "___") {
		return false, false // gqlgen's introspection types: left as they are
	}
	if method {
		fn.Body.List[0].(*ast.ReturnStmt).Results[0] = invoke(dot("serial", "Value"),
			ast.NewIdent("ctx"), ast.NewIdent("field"),
			invoke(dot("obj", value)),
			call.Args[6])
		return true, false
	}
	// New nodes without positions, so that the printer lays the call out on
	// one line rather than where the dropped arguments were.
	ref := &ast.UnaryExpr{Op: token.AND, X: dot("obj", value)}
	var result ast.Expr
	switch m := marshaller(call.Args[6]); {
	case !refs:
	case m == "marshalNString2string" || m == "marshalNID2string":
		if objPointer(fn) {
			result = invoke(dot("serial", "String"), ref)
		}
	case m == "marshalNTime2timeᚐTime":
		if objPointer(fn) {
			result = invoke(dot("serial", "Time"), ast.NewIdent("ctx"), ast.NewIdent("field"), ref, call.Args[6])
		}
	default:
		if identities[marshaller(call.Args[6])] && objPointer(fn) {
			// An enum that marshals itself: a pointer to it does too,
			// and an interface holds a pointer without an allocation.
			result = ref
			if schema.Types[fd.Type.Name()].Kind == gqlast.Enum {
				// ent's and gqlgen's enums marshal with strconv.Quote,
				// which allocates; serial.Enum writes a value that
				// needs no escaping (a GraphQL name) as it is.
				result = invoke(dot("serial", "Enum"), ref)
			}
		}
	}
	byRef = result != nil
	if result == nil {
		result = invoke(dot("serial", "Value"),
			ast.NewIdent("ctx"), ast.NewIdent("field"),
			dot("obj", value),
			call.Args[6])
	}
	fn.Body.List[0].(*ast.ReturnStmt).Results[0] = result
	return true, byRef
}

// identityMarshallers lists the generated `marshalN…` methods of ec that
// return their value as it is (`return v`: an enum that implements
// graphql.Marshaler itself), across the generated files.
func identityMarshallers(files []*ast.File) map[string]bool {
	ids := map[string]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !strings.HasPrefix(fn.Name.Name, "marshalN") || len(fn.Body.List) != 1 {
				continue
			}
			ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 || !isIdent(ret.Results[0], "v") {
				continue
			}
			params := fn.Type.Params.List
			if last := params[len(params)-1]; len(last.Names) == 1 && last.Names[0].Name == "v" {
				if _, ok := last.Type.(*ast.SelectorExpr); ok { // a named type of another package, not a pointer
					ids[fn.Name.Name] = true
				}
			}
		}
	}
	return ids
}

// marshaller is the name of the ec method a generated marshal closure
// `func(ctx, selections, v) graphql.Marshaler { return ec.marshalX(ctx, selections, v) }`
// calls, or "".
func marshaller(e ast.Expr) string {
	lit, ok := e.(*ast.FuncLit)
	if !ok || len(lit.Body.List) != 1 {
		return ""
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return ""
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X, "ec") {
		return ""
	}
	return sel.Sel.Name
}

// objPointer reports whether fn's obj parameter is a pointer, so that
// &obj.X points into the loaded object rather than into a copy.
func objPointer(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		for _, n := range p.Names {
			if n.Name == "obj" {
				_, ok := p.Type.(*ast.StarExpr)
				return ok
			}
		}
	}
	return false
}
