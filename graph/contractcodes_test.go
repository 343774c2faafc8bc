package graph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// contractCodes are the error codes of the contract: DESIGN §3's table,
// GraphQL's two limits (§5), and NOT_SUPPORTED (backups through the API on
// PostgreSQL, docs/errors.md). A code the server emits that is not here is a
// code no client was told about.
var contractCodes = map[string]bool{
	"VALIDATION_ERROR": true, "INVALID_API_KEY": true, "TOKEN_EXPIRED": true, "UNAUTHORIZED": true,
	"PERMISSION_DENIED": true, "NOT_FOUND": true, "METHOD_NOT_ALLOWED": true, "PAYLOAD_TOO_LARGE": true,
	"UNSUPPORTED_MEDIA_TYPE": true, "RATE_LIMITED": true, "INTERNAL_ERROR": true, "UNAVAILABLE": true,
	"SLOW_CONSUMER": true, "CURSOR_EXPIRED": true, "PRECONDITION_FAILED": true,
	"IDEMPOTENCY_KEY_REUSED": true, "IDEMPOTENCY_KEY_IN_USE": true, "NOT_SUPPORTED": true,
	"DEPTH_LIMIT_EXCEEDED": true, "COMPLEXITY_LIMIT_EXCEEDED": true,
}

// TestCodesOfTheContract reads every Go source of the module, generated
// code included, and holds to the contract every code it can put in an
// error: the constants of type Code, what errcode.Set is given, and every
// "code" key of a map literal or an assignment, when they are constants.
func TestCodesOfTheContract(t *testing.T) {
	fset := token.NewFileSet()
	// use is where a code is put in an error: expr, in package pkg.
	type use struct {
		pos, pkg string
		expr     ast.Expr
	}
	consts := map[string]string{} // "pkg.Name" → value of every string constant
	var sites []use
	var codeConsts []struct{ pos, code string }
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i >= len(n.Values) {
						break
					}
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						consts[pkg+"."+name.Name] = v
						if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Code" {
							codeConsts = append(codeConsts, struct{ pos, code string }{fset.Position(lit.Pos()).String(), v})
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Set" && len(n.Args) == 2 {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "errcode" {
						sites = append(sites, use{fset.Position(n.Pos()).String(), pkg, n.Args[1]})
					}
				}
			case *ast.KeyValueExpr:
				if lit, ok := n.Key.(*ast.BasicLit); ok && lit.Value == `"code"` {
					sites = append(sites, use{fset.Position(n.Pos()).String(), pkg, n.Value})
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if ix, ok := lhs.(*ast.IndexExpr); ok && i < len(n.Rhs) {
						if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Value == `"code"` {
							sites = append(sites, use{fset.Position(n.Pos()).String(), pkg, n.Rhs[i]})
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(pkg string, e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			v, err := strconv.Unquote(e.Value)
			return v, err == nil
		case *ast.Ident:
			v, ok := consts[pkg+"."+e.Name]
			return v, ok
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				v, ok := consts[x.Name+"."+e.Sel.Name]
				return v, ok
			}
		}
		return "", false
	}
	checked := 0
	for _, s := range codeConsts {
		checked++
		if !contractCodes[s.code] {
			t.Errorf("%s: code %s is not one of the contract's", s.pos, s.code)
		}
	}
	for _, s := range sites {
		v, ok := resolve(s.pkg, s.expr)
		if !ok {
			continue // a variable: its value is one of the constants above
		}
		checked++
		if !contractCodes[v] {
			t.Errorf("%s: code %s is not one of the contract's", s.pos, v)
		}
	}
	if checked < 15 {
		t.Fatalf("only %d codes found: is the walk reading the module?", checked)
	}
}
