// Command upstream holds the files copied from upstream modules to the
// versions they were copied from (third_party/UPSTREAM): it fails, naming
// the file, when go.mod now requires another version of a module a file
// was copied from, or when the upstream file no longer has the recorded
// hash, so that an upgrade re-diffs every copy before generation goes on.
// `go generate ./ent` and `go generate ./graph` run it first.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
	problems, err := check(root, filepath.Join(root, manifestPath))
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "upstream:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
