package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// measuredFigure is a figure that reads as a measurement: a number with a
// unit of time below the second, of size or of throughput, or a ratio or a
// share. A number alone (HTTP 404, RFC 3339, 1–200 characters, 100/minute)
// is not one.
var measuredFigure = regexp.MustCompile(`\d(?:[\d,.]*\d)?\s*(?:(?:ns|µs|μs|us|ms|[kKMGT]i?B|[a-z]*/s|x)\b|×|%)|\d\.\d+\s*s\b`)

// settingDefault ends the text before a figure that states a setting's
// default ("Default 10ms", "default ±10%"): configured, not measured.
var settingDefault = regexp.MustCompile(`(?i)\bdefault:?\s*[±~]?$`)

// measuredFigures returns the figures of a comment line that read as
// measurements.
func measuredFigures(line string) []string {
	var found []string
	for _, m := range measuredFigure.FindAllStringIndex(line, -1) {
		if !settingDefault.MatchString(line[:m[0]]) {
			found = append(found, line[m[0]:m[1]])
		}
	}
	return found
}

// TestCommentsCarryNoFigures: no comment of hand-written Go carries a
// measured figure (timings, sizes, throughput, ratios, shares). Such a
// figure is true of one machine on one day and goes stale unseen; it
// belongs in BENCHMARKS.md or docs/ (ablation.md, development.md), and the
// comment says why. Generated files (the "Code generated … DO NOT EDIT."
// line) are not ours to word.
func TestCommentsCarryNoFigures(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		for _, g := range f.Comments {
			for _, c := range g.List {
				line := fset.Position(c.Pos()).Line
				for i, text := range strings.Split(c.Text, "\n") {
					if figs := measuredFigures(text); len(figs) > 0 {
						t.Errorf("%s:%d: a measured figure in a comment (%s): say why in the comment, "+
							"and put the figure in BENCHMARKS.md or docs/", rel, line+i, strings.Join(figs, ", "))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d hand-written Go files; expected the repository's", files)
	}
}

// TestMeasuredFigures: what the check of comments catches and what it lets
// be, one line each.
func TestMeasuredFigures(t *testing.T) {
	cases := []struct {
		line   string
		caught string // the figures, comma-separated; "" lets the line be
	}{
		{"without these goroutines p99 fell to 30-70 ms.", "70 ms"},
		{"a write costs about 10-20 µs whatever it carries", "20 µs"},
		{"about 15 MB of binary and 5 MiB of resident memory", "15 MB, 5 MiB"},
		{"GraphQL at 0.82× the REST list", "0.82×"},
		{"went from 0.71x with 8 slots to 1.07x with 32", "0.71x, 1.07x"},
		{"about 4% of a GraphQL request's CPU", "4%"},
		{"5,212 pages, 20 MB, in one round", "20 MB"},
		{"cost ~0.1 s of CPU there", "0.1 s"},
		{"the reference served 12,400 req/s", "12,400 req/s"},
		{"876 creates/s for one owner against 2,264/s", "876 creates/s, 2,264/s"},
		{"a page takes an 8 KiB slot", "8 KiB"},
		{"Spaced by 20ms, a busy stream", "20ms"},
		{"HTTP 404 for an unknown route", ""},
		{"timestamps in RFC 3339", ""},
		{"a name of 1–200 characters", ""},
		{"100/minute and 1000/hour by default", ""},
		{"a count is spread over 32 rows", ""},
		{"Default 10ms; negative: none.", ""},
		{"Jitter spreads a retry delay. Default ±10%.", ""},
		{"errors wrapped with %w", ""},
		{"the mask 0x1f keeps five bits", ""},
		{"seed 10 users", ""},
		{"SHA-256 of the key", ""},
	}
	for _, c := range cases {
		if got := strings.Join(measuredFigures(c.line), ", "); got != c.caught {
			t.Errorf("%q: caught %q, want %q", c.line, got, c.caught)
		}
	}
}
