package gqlrewrite_test

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/codegen/config"
	gqlast "github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph/internal/gqlrewrite"
)

// pristine returns gqlgen's own output as generation last kept it
// (testdata/gqlgen, written by graph/gqlgen.go) and the schema.
func pristine(t *testing.T) (map[string][]byte, *gqlast.Schema) {
	t.Helper()
	paths, err := filepath.Glob("testdata/gqlgen/*.go.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshot of gqlgen's output in testdata/gqlgen (go generate ./graph writes it): %v", err)
	}
	srcs := map[string][]byte{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs[strings.TrimSuffix(filepath.Base(p), ".txt")] = src
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(wd, "..", "..", ".."))
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadSchema(); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	return srcs, cfg.Schema
}

// TestRewriteGqlgenOutput: the rewrite of gqlgen's own output is the
// committed executor, byte for byte (unless that was generated with the
// rewrite off), and rewrites the sites named here. How many sites of each
// kind there are follows from the schema: Rewrite itself fails on a
// candidate it missed (Miss, from the schema) or a kind it matched nowhere,
// so a field added to a schema needs no count here.
func TestRewriteGqlgenOutput(t *testing.T) {
	srcs, schema := pristine(t)
	out, report, err := gqlrewrite.Rewrite(srcs, schema)
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string][]byte{}
	rewritten := false
	for name := range srcs {
		src, err := os.ReadFile(filepath.Join("..", "..", "generated", name))
		if err != nil {
			t.Fatal(err)
		}
		generated[name] = src
		rewritten = rewritten || bytes.Contains(src, []byte(") "+gqlrewrite.Marker+"() bool"))
	}
	if !rewritten {
		// Generated with the rewrite off (CI's second build, or a gqlgen
		// upgrade committed before the rewrite follows it): the snapshot
		// is the last output the rewrite was generated from, which the
		// pins below still check.
		t.Log("graph/generated is gqlgen's own executor (rewrite off): not compared")
	}
	for name, src := range out {
		if rewritten && !bytes.Equal(src, generated[name]) {
			t.Errorf("rewriting testdata/gqlgen/%s.txt does not give graph/generated/%s: run go generate ./graph", name, name)
		}
	}
	for _, site := range []struct {
		kind gqlrewrite.Kind
		fn   string
	}{
		{gqlrewrite.List, "ent.generated.go: marshalNItemEdge2ᚕᚖgithubᚗcomᚋacmeᚋitemsvcᚋentᚐItemEdgeᚄ"},
		{gqlrewrite.Buffer, "root_.generated.go: Exec"},
		{gqlrewrite.ScalarRef, "ent.generated.go: _Item_createdAt"},
		{gqlrewrite.ObjectField, "ent.generated.go: _ItemEdge_node"},
		{gqlrewrite.Object, "ent.generated.go: _Item"},
		{gqlrewrite.InPlace, "ent.generated.go: _Item"},
		{gqlrewrite.InPlace, "ent.generated.go: _User"},
	} {
		if !slices.Contains(report[site.kind], site.fn) {
			t.Errorf("%s: %s not rewritten", site.kind, site.fn)
		}
	}
}

// TestBrokenSiteFailsGeneration: one site of gqlgen's output changed as a
// template change would (a local renamed, an argument added, a mangled
// helper name changed) fails the rewrite, naming the function and the kind,
// where it used to leave the function on gqlgen's path without a word.
func TestBrokenSiteFailsGeneration(t *testing.T) {
	srcs, schema := pristine(t)
	tests := []struct {
		name     string
		file, fn string
		old, new string
		kind     gqlrewrite.Kind
	}{
		{"list's package renamed", "ent.generated.go", "marshalNItemEdge2ᚕᚖgithubᚗcomᚋacmeᚋitemsvcᚋentᚐItemEdgeᚄ",
			"graphql.MarshalSliceConcurrently(", "gql.MarshalSliceConcurrently(", gqlrewrite.List},
		{"object's out renamed", "ent.generated.go", "_Item", "out", "res", gqlrewrite.Object},
		{"innerFunc's fs renamed", "ent.generated.go", "_Item", "fs *graphql.FieldSet", "set *graphql.FieldSet", gqlrewrite.InPlace},
		{"ResolveField with ten arguments", "ent.generated.go", "_Item_name",
			"\t\ttrue,\n\t\ttrue,\n\t)", "\t\ttrue,\n\t\ttrue,\n\t\tnil,\n\t)", gqlrewrite.Scalar},
		{"time marshaller renamed", "ent.generated.go", "_Item_createdAt",
			"marshalNTime2timeᚐTime(", "marshalNTime2timeᚐTimeV2(", gqlrewrite.ScalarRef},
		{"response buffer renamed", "root_.generated.go", "Exec", "var buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)", "var b bytes.Buffer\n\t\t\tdata.MarshalGQL(&b)", gqlrewrite.Buffer},
		{"ResolveField renamed", "ent.generated.go", "_ItemEdge_node",
			"graphql.ResolveField(", "graphql.ResolveFieldV2(", gqlrewrite.ObjectField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			broken := maps.Clone(srcs)
			broken[tt.file] = breakFunc(t, srcs[tt.file], tt.fn, tt.old, tt.new)
			_, _, err := gqlrewrite.Rewrite(broken, schema)
			var miss *gqlrewrite.MissError
			if !errors.As(err, &miss) {
				t.Fatalf("rewrite of a broken %s: err = %v, want a *MissError", tt.fn, err)
			}
			want := gqlrewrite.Miss{File: tt.file, Func: tt.fn, Kind: tt.kind}
			if !slices.Contains(miss.Misses, want) {
				t.Errorf("misses %+v, want %+v among them", miss.Misses, want)
			}
			if msg := err.Error(); !strings.Contains(msg, "func "+tt.fn+": "+string(tt.kind)+" not rewritten") {
				t.Errorf("error does not name the function and kind:\n%s", msg)
			}
		})
	}
}

// breakFunc replaces old by new, every time, in the function fn of src only.
func breakFunc(t *testing.T, src []byte, fn, old, new string) []byte {
	t.Helper()
	s := string(src)
	start := -1
	for _, recv := range []string{"(ec *executionContext) ", "(e *executableSchema) "} {
		if i := strings.Index(s, "\nfunc "+recv+fn+"("); i >= 0 {
			start = i + 1
		}
	}
	if start < 0 {
		t.Fatalf("no function %s", fn)
	}
	end := start + strings.Index(s[start:], "\n}\n") + 3
	body := s[start:end]
	if !strings.Contains(body, old) {
		t.Fatalf("%q not in %s", old, fn)
	}
	return []byte(s[:start] + strings.ReplaceAll(body, old, new) + s[end:])
}

// TestSkip: a kind left out (gqlgen.go -skip, to measure what it buys) is
// neither rewritten nor expected: its sites are not misses, even broken.
func TestSkip(t *testing.T) {
	srcs, schema := pristine(t)
	broken := maps.Clone(srcs)
	broken["ent.generated.go"] = breakFunc(t, srcs["ent.generated.go"], "_ItemEdge_node",
		"graphql.ResolveField(", "graphql.ResolveFieldV2(")
	for _, in := range []map[string][]byte{srcs, broken} {
		out, report, err := gqlrewrite.Rewrite(in, schema, gqlrewrite.ObjectField)
		if err != nil {
			t.Fatalf("rewrite skipping %s: %v", gqlrewrite.ObjectField, err)
		}
		if len(report[gqlrewrite.ObjectField]) != 0 || bytes.Contains(out["ent.generated.go"], []byte("serial.Field(")) {
			t.Errorf("%s rewritten although skipped: %v", gqlrewrite.ObjectField, report[gqlrewrite.ObjectField])
		}
		if len(report[gqlrewrite.Scalar]) == 0 {
			t.Errorf("skipping %s skipped %s too", gqlrewrite.ObjectField, gqlrewrite.Scalar)
		}
	}
	// A kind that another is part of goes with it.
	_, report, err := gqlrewrite.Rewrite(srcs, schema, gqlrewrite.Object)
	if err != nil || len(report[gqlrewrite.InPlace]) != 0 {
		t.Errorf("skipping %s: err %v, %s %v", gqlrewrite.Object, err, gqlrewrite.InPlace, report[gqlrewrite.InPlace])
	}
}
