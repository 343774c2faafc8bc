//go:build ignore

// vendor.go copies the prebuilt browser bundles of the npm packages pinned in
// web/npm/package.json (installed by `npm ci` in web/npm) into
// web/assets/vendor/<package>@<version>/, and writes their sha256 sums to
// web/assets/vendor/SHA256SUMS. The server embeds that folder, so building
// it needs nothing but Go.
//
// Run by `go generate ./web` from the web folder. Without web/npm/node_modules
// (a machine without node, or before `npm ci`) it copies nothing and only
// checks that the committed files still match SHA256SUMS and the pins, so
// that `go generate ./...` works everywhere and changes nothing.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// files are what the pages need of each package: the packages' own
// minified UMD/standalone bundles, as published, and their licences.
var files = map[string][]string{
	"graphiql": {"graphiql.min.js", "graphiql.min.css", "LICENSE"},
	// The explorer plugin publishes no licence file (its package.json says
	// MIT); its bundle is mostly graphiql-explorer, whose MIT licence goes
	// with it. The bundle takes React and GraphiQL from the page's globals.
	"@graphiql/plugin-explorer": {"dist/index.umd.js", "dist/style.css", "../../graphiql-explorer/LICENSE"},
	"react":                     {"umd/react.production.min.js", "LICENSE"},
	"react-dom":                 {"umd/react-dom.production.min.js", "LICENSE"},
	"redoc":                     {"bundles/redoc.standalone.js", "bundles/redoc.standalone.js.LICENSE.txt", "LICENSE"},
}

const (
	npmDir    = "npm"
	vendorDir = "assets/vendor"
	sumsFile  = "SHA256SUMS"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "web/npm/vendor.go:", err)
		os.Exit(1)
	}
}

func run() error {
	pins, err := readPins(filepath.Join(npmDir, "package.json"))
	if err != nil {
		return err
	}
	for pkg := range pins {
		if files[pkg] == nil {
			return fmt.Errorf("package.json pins %s, which vendor.go does not copy: add its files to the table", pkg)
		}
	}
	for pkg := range files {
		if pins[pkg] == "" {
			return fmt.Errorf("vendor.go copies %s, which package.json does not pin", pkg)
		}
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules")); errors.Is(err, fs.ErrNotExist) {
		if err := verify(pins); err != nil {
			return fmt.Errorf("%w\n(run `npm ci` in web/npm, then `go generate ./web`, to copy them afresh)", err)
		}
		return nil
	}
	return copyAll(pins)
}

// readPins returns the exact versions package.json pins, by package.
func readPins(name string) (map[string]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	var p struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	for pkg, v := range p.DevDependencies {
		if strings.ContainsAny(v, "^~<>=*x |") {
			return nil, fmt.Errorf("%s: %s is %q, pin an exact version", name, pkg, v)
		}
	}
	return p.DevDependencies, nil
}

// copyAll copies every file from node_modules, after checking that the
// installed version is the pinned one, drops folders of other versions and
// writes the sums.
func copyAll(pins map[string]string) error {
	sums := map[string]string{}
	for pkg, version := range pins {
		installed, err := readVersion(filepath.Join(npmDir, "node_modules", pkg, "package.json"))
		if err != nil {
			return fmt.Errorf("%s is not installed: run `npm ci` in web/npm (%w)", pkg, err)
		}
		if installed != version {
			return fmt.Errorf("node_modules holds %s@%s, package.json pins %s: run `npm ci` in web/npm", pkg, installed, version)
		}
		dir := pkg + "@" + version
		if err := os.MkdirAll(filepath.Join(vendorDir, dir), 0o755); err != nil {
			return err
		}
		for _, f := range files[pkg] {
			b, err := os.ReadFile(filepath.Join(npmDir, "node_modules", pkg, filepath.FromSlash(f)))
			if err != nil {
				return fmt.Errorf("copy: %w", err)
			}
			rel := path.Join(dir, path.Base(f))
			if err := writeIfChanged(filepath.Join(vendorDir, filepath.FromSlash(rel)), b); err != nil {
				return err
			}
			sums[rel] = sum(b)
		}
	}
	if err := removeStale(sums); err != nil {
		return err
	}
	var out bytes.Buffer
	for _, rel := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&out, "%s  %s\n", sums[rel], rel)
	}
	return writeIfChanged(filepath.Join(vendorDir, sumsFile), out.Bytes())
}

// verify checks the committed files against SHA256SUMS and the pins.
func verify(pins map[string]string) error {
	f, err := os.Open(filepath.Join(vendorDir, sumsFile))
	if err != nil {
		return fmt.Errorf("no vendored assets: %w", err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hash, rel, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("%s: malformed line %q", sumsFile, sc.Text())
		}
		want[rel] = hash
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for pkg, version := range pins {
		for _, f := range files[pkg] {
			rel := path.Join(pkg+"@"+version, path.Base(f))
			if want[rel] == "" {
				return fmt.Errorf("%s: %s is missing: the committed assets are not those of the pins", sumsFile, rel)
			}
		}
	}
	for rel, hash := range want {
		b, err := os.ReadFile(filepath.Join(vendorDir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		if sum(b) != hash {
			return fmt.Errorf("%s/%s does not match %s", vendorDir, rel, sumsFile)
		}
	}
	return removeStale(want)
}

// removeStale deletes vendored files that are not in keep (other versions).
func removeStale(keep map[string]string) error {
	return filepath.WalkDir(vendorDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == vendorDir {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, vendorDir+string(filepath.Separator)))
		if d.IsDir() {
			for k := range keep {
				if strings.HasPrefix(k, rel+"/") {
					return nil
				}
			}
			fmt.Fprintln(os.Stderr, "removing", p)
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		if rel == sumsFile || keep[rel] != "" {
			return nil
		}
		fmt.Fprintln(os.Stderr, "removing", p)
		return os.Remove(p)
	})
}

func readVersion(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	err = json.Unmarshal(b, &p)
	return p.Version, err
}

// writeIfChanged leaves a file alone when it already holds b, so that a
// run that changes nothing touches nothing.
func writeIfChanged(name string, b []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(name, b, 0o644)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
