package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// manifestPath is the manifest of copied files, from the module root.
const manifestPath = "third_party/UPSTREAM"

// copied is one line of the manifest.
type copied struct {
	ours     string // our file, from the module root
	module   string
	version  string // the version it was copied from
	path     string // the upstream file, in its module
	sum      string // SHA-256 of the upstream file, hex
	verbatim bool   // our file is the upstream file unchanged
}

// readManifest parses the manifest: blank lines and # comments aside, five
// fields per line.
func readManifest(name string) ([]copied, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []copied
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		module, version, ok := strings.Cut(valueAt(f, 1), "@")
		if len(f) != 5 || !ok || (f[4] != "verbatim" && f[4] != "changed") {
			return nil, fmt.Errorf("%s:%d: want: our/file module@version upstream/path sha256 verbatim|changed", name, n)
		}
		out = append(out, copied{ours: f[0], module: module, version: version, path: f[2], sum: f[3], verbatim: f[4] == "verbatim"})
	}
	return out, sc.Err()
}

func valueAt(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// required is a module as go.mod requires it, with its directory in the
// module cache.
type required struct{ version, dir string }

// requiredModules asks the go command, in root, for the version of each
// module in the build list and where the module cache holds it.
func requiredModules(root string) (map[string]required, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{.Dir}}", "all")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w: %s", err, stderr.Bytes())
	}
	mods := map[string]required{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 {
			mods[f[0]] = required{version: f[1], dir: f[2]}
		} else if len(f) == 2 {
			mods[f[0]] = required{version: f[1]} // not downloaded
		}
	}
	return mods, nil
}

// download fetches module@version into the module cache and returns its
// directory there.
func download(root, module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download: %s", m.Error)
	}
	return m.Dir, nil
}

// check compares each copy of the manifest with go.mod and the module cache
// and returns what is wrong, one sentence per problem, each naming the file
// and what to do.
func check(root, manifest string) ([]string, error) {
	copies, err := readManifest(manifest)
	if err != nil {
		return nil, err
	}
	mods, err := requiredModules(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, c := range copies {
		rel, _ := filepath.Rel(root, manifest)
		redo := fmt.Sprintf("re-diff %s against %s@%s/%s and update %s", c.ours, c.module, mods[c.module].version, c.path, rel)
		m, ok := mods[c.module]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s is a copy from %s, which go.mod no longer requires: drop its line from %s, or require the module", c.ours, c.module, rel))
			continue
		case m.version != c.version:
			problems = append(problems, fmt.Sprintf("%s was copied from %s@%s but go.mod requires %s: %s", c.ours, c.module, c.version, m.version, redo))
			continue
		case m.dir == "":
			// A fresh machine has only the modules the build needed so
			// far; the copy's module is fetched like any other.
			dir, err := download(root, c.module, m.version)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s@%s is not in the module cache and cannot be downloaded (%v): run go mod download %s", c.ours, c.module, m.version, err, c.module))
				continue
			}
			m.dir = dir
			mods[c.module] = m
		}
		sum, err := fileSum(filepath.Join(m.dir, filepath.FromSlash(c.path)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: the upstream file %s@%s/%s cannot be read (%v): %s", c.ours, c.module, c.version, c.path, err, redo))
			continue
		}
		if sum != c.sum {
			problems = append(problems, fmt.Sprintf("%s: %s@%s/%s has SHA-256 %s, not the recorded %s: %s", c.ours, c.module, c.version, c.path, sum, c.sum, redo))
			continue
		}
		if c.verbatim {
			ours, err := fileSum(filepath.Join(root, filepath.FromSlash(c.ours)))
			if err != nil || ours != c.sum {
				problems = append(problems, fmt.Sprintf("%s should be %s@%s/%s unchanged but differs: run go generate ./ent, which copies it", c.ours, c.module, c.version, c.path))
			}
		}
	}
	return problems, nil
}

// fileSum is the SHA-256 of a file, hex.
func fileSum(name string) (string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:]), nil
}
