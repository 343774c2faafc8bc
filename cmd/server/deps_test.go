package main

import (
	"os/exec"
	"strings"
	"testing"
)

// codegenOnly are import paths (prefixes) of code generators and schema
// differs: the server applies committed migrations and runs generated code,
// and linking these cost tens of megabytes of binary and their init-time
// work (issue 14). ent/entc.go, ent/schema/entgql and internal/migration say
// how they are kept out.
var codegenOnly = []string{
	"entgo.io/ent/entc",
	"entgo.io/contrib/entgql", // the generator; third_party/entgql is its run-time half
	"entgo.io/ent/dialect/sql/schema",
	"golang.org/x/tools",
	"ariga.io/atlas",
	"github.com/99designs/gqlgen/api",
	"github.com/99designs/gqlgen/codegen",
	"github.com/99designs/gqlgen/plugin",
	"github.com/99designs/gqlgen/internal/code",
	"go/types",
	"github.com/hashicorp/hcl",
}

// TestNoCodegenDeps: the server's dependencies include no code generator.
func TestNoCodegenDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages; expected the server's whole graph", len(deps))
	}
	for _, dep := range deps {
		for _, bad := range codegenOnly {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("the server imports %s; find the importer with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/server`", dep)
			}
		}
	}
}
