package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// codegenOnly are import paths (prefixes) of code generators and schema
// differs: the server applies committed migrations and runs generated code,
// and linking these costs tens of megabytes of binary and their init-time
// work. ent/entc.go, ent/schema/entgql and internal/migration say how they
// are kept out.
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

// TestNoReflectMethodMarking: nothing in the server calls reflect's
// Type.Method or MethodByName (or Value.Method...) with a non-constant
// argument. One such call, anywhere reachable, makes the linker keep every
// exported method of every type in the binary, because any might be looked
// up by name: a large part of the binary and of its resident memory at
// start (docs/development.md, What the server links). The linker names such
// functions <ReflectMethod> in its dependency dump; the first one listed is
// the culprit, the rest follow from it. Known culprits: html/template
// (web/), ent's generated runtime evaluating the schemas' Fields()
// (ent/schema/named says how it is kept out), and gRPC's
// golang.org/x/net/trace, of the OTLP trace exporter (html/template again:
// `make build` gives -tags grpcnotrace, which leaves it out).
func TestNoReflectMethodMarking(t *testing.T) {
	if testing.Short() {
		t.Skip("links the server (-short)")
	}
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "nomsgpack,grpcnotrace", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "server"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as `make build`
	dump, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var marked []string
	lines := 0
	sc := bufio.NewScanner(dump)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines++
		if line := sc.Text(); strings.Contains(line, "<ReflectMethod>") && len(marked) < 5 {
			marked = append(marked, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v", err)
	}
	if lines < 10000 {
		t.Fatalf("the linker's dependency dump has %d lines; has -dumpdep changed?", lines)
	}
	if len(marked) > 0 {
		t.Errorf("the linker keeps every exported method, because of (first is the root):\n%s\nfind who reaches it in the output of\n  go build -trimpath -tags nomsgpack,grpcnotrace -ldflags=-dumpdep -o /dev/null ./cmd/server", strings.Join(marked, "\n"))
	}
}
