package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayoutListsEveryPackage: every directory of Go code has a line
// in the README's layout table (STYLE 12), so a newcomer finds a thing where
// its name says. A directory is listed by a row of its own, or by the row of
// an enclosing directory naming it in backticks (`graph/scalar`, or
// relative to that row: `rule/`). Directories whose Go files are all
// generated (ent's, gqlgen's) are grouped by their row and need no line.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := layoutRows(t, readme)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		hand, err := handWrittenGo(p)
		if err != nil || !hand {
			return err
		}
		if !listed(rows, rel) {
			t.Errorf("%s has Go code but no line in the README's layout table: add a row | `%s` | what it holds |, "+
				"or name it in backticks in the row of the directory that holds it", rel, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// layoutRow is one row of the layout table: its directories (first cell)
// and the paths its description names in backticks.
type layoutRow struct {
	where []string
	names []string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// layoutRows reads the table that follows the README's "Layout:" line.
func layoutRows(t *testing.T, readme []byte) []layoutRow {
	t.Helper()
	var rows []layoutRow
	in := false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "Layout:":
			in = true
		case in && strings.HasPrefix(line, "|"):
			cells := strings.SplitN(strings.Trim(line, "|"), "|", 2)
			if len(cells) < 2 {
				continue
			}
			var r layoutRow
			for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
				r.where = append(r.where, strings.TrimSuffix(m[1], "/"))
			}
			for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
				r.names = append(r.names, strings.TrimSuffix(m[1], "/"))
			}
			rows = append(rows, r)
		case in && len(rows) > 0:
			return rows
		}
	}
	if len(rows) == 0 {
		t.Fatal(`the README has no table after a "Layout:" line`)
	}
	return rows
}

// listed reports whether the table has a line for the directory dir.
func listed(rows []layoutRow, dir string) bool {
	for _, r := range rows {
		for _, w := range r.where {
			if w == dir {
				return true
			}
			if !strings.HasPrefix(dir, w+"/") {
				continue
			}
			for _, n := range r.names {
				if n == dir || path.Join(w, n) == dir {
					return true
				}
			}
		}
	}
	return false
}

// handWrittenGo reports whether dir holds a Go file that is not generated.
func handWrittenGo(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	generated := regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return false, err
		}
		if !generated.Match(data) {
			return true, nil
		}
	}
	return false, nil
}
