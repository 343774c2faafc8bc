package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestHolds is the check go generate runs: every copied file's
// module is at the recorded version in go.mod, with the recorded hash.
func TestManifestHolds(t *testing.T) {
	root := filepath.Join("..", "..")
	problems, err := check(root, filepath.Join(root, manifestPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckNamesTheFile: each way a copy can fall out of step is reported
// with the file and what to do, one row per way.
func TestCheckNamesTheFile(t *testing.T) {
	const (
		pagination = "entgo.io/contrib@v0.7.0 entgql/template/pagination.tmpl 912a2eb790de8290f27872f203c9fd6243546f25774c574cba0115878ea96ffa"
		wrongSum   = "0000000000000000000000000000000000000000000000000000000000000000"
	)
	rows := []struct {
		name, line string
		want       []string // substrings of the one problem; none: no problem
	}{
		{"in step", "ent/template/pagination.tmpl " + pagination + " changed", nil},
		{"go.mod moved the module", "ent/template/pagination.tmpl entgo.io/contrib@v0.6.0 entgql/template/pagination.tmpl " + wrongSum + " changed",
			[]string{"ent/template/pagination.tmpl was copied from entgo.io/contrib@v0.6.0 but go.mod requires v0.7.0",
				"re-diff ent/template/pagination.tmpl against entgo.io/contrib@v0.7.0/entgql/template/pagination.tmpl and update"}},
		{"upstream file changed", "ent/template/pagination.tmpl entgo.io/contrib@v0.7.0 entgql/template/pagination.tmpl " + wrongSum + " changed",
			[]string{"ent/template/pagination.tmpl: entgo.io/contrib@v0.7.0/entgql/template/pagination.tmpl has SHA-256 912a2eb7", "re-diff"}},
		{"upstream file gone", "ent/template/pagination.tmpl entgo.io/contrib@v0.7.0 entgql/template/gone.tmpl " + wrongSum + " changed",
			[]string{"ent/template/pagination.tmpl: the upstream file entgo.io/contrib@v0.7.0/entgql/template/gone.tmpl cannot be read"}},
		{"verbatim copy edited", "ent/template/pagination.tmpl " + pagination + " verbatim",
			[]string{"ent/template/pagination.tmpl should be entgo.io/contrib@v0.7.0/entgql/template/pagination.tmpl unchanged", "go generate ./ent"}},
		{"module no longer required", "graph/post.go example.com/gone@v1.0.0 x.go " + wrongSum + " changed",
			[]string{"graph/post.go is a copy from example.com/gone, which go.mod no longer requires"}},
	}
	root := filepath.Join("..", "..")
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			manifest := filepath.Join(t.TempDir(), "UPSTREAM")
			if err := os.WriteFile(manifest, []byte("# a comment\n\n"+row.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, err := check(root, manifest)
			if err != nil {
				t.Fatal(err)
			}
			if len(row.want) == 0 {
				if len(problems) > 0 {
					t.Fatalf("problems %q, want none", problems)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("problems %q, want one", problems)
			}
			for _, w := range row.want {
				if !strings.Contains(problems[0], w) {
					t.Errorf("problem %q does not say %q", problems[0], w)
				}
			}
		})
	}
}
