package graph_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestGraphDoesNotImportREST keeps the transports side by side: what GraphQL
// shares with REST lives in internal/httpapi, which both import. It walks the
// module's imports from every package under graph (their tests' direct
// imports too; internal/testutil wires both transports and may import rest).
func TestGraphDoesNotImportREST(t *testing.T) {
	const module = "github.com/acme/itemsvc/"
	const forbidden = module + "rest"
	var roots []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(p, 0); err == nil {
			roots = append(roots, filepath.ToSlash(filepath.Join("graph", p)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{} // import path -> the chain that reached it
	var walk func(path string, chain []string)
	walk = func(path string, chain []string) {
		if _, ok := seen[path]; ok {
			return
		}
		chain = append(chain[:len(chain):len(chain)], path)
		seen[path] = chain
		if path == forbidden || strings.HasPrefix(path, forbidden+"/") {
			t.Errorf("%s imports rest: %s; move what it needs to internal/httpapi", chain[0], strings.Join(chain, " -> "))
			return
		}
		pkg, err := build.Import(path, "..", 0)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				walk(imp, chain)
			}
		}
	}
	for _, dir := range roots {
		pkg, err := build.ImportDir("../"+dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		walk(module+dir, nil)
		for _, imp := range append(pkg.TestImports, pkg.XTestImports...) {
			if imp == forbidden {
				t.Errorf("the tests of %s import rest; test GraphQL through internal/testutil", dir)
			}
		}
	}
}
