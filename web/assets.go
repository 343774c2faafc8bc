package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The third-party bundles in assets/vendor are copied from the npm packages
// pinned in npm/package.json; without npm/node_modules this only checks the
// committed copies against assets/vendor/SHA256SUMS.
//
//go:generate go run ./npm/vendor.go

// AssetsPath is where the pages' scripts and styles are served from.
const AssetsPath = "/assets/"

// immutable is the cache policy of an asset asked for by its current hash:
// the URL changes whenever the content does, so a browser never revalidates.
const immutable = "public, max-age=31536000, immutable"

//go:embed assets
var assetFS embed.FS

// asset is one embedded file, with its content hash. Its bytes are read
// (embed.FS copies them) on first use.
type asset struct {
	data func() []byte

	hashOnce sync.Once
	hash     string // first 16 hex digits of its sha256; see sum

	gzipOnce sync.Once
	gz       []byte // data gzipped, once asked for; nil if that saves little
}

// sum returns the content hash, computed on first use: reading and hashing
// every bundle at start put copies of them all on the heap, and read as
// much of the binary into memory, before anyone asked for a page.
func (a *asset) sum() string {
	a.hashOnce.Do(func() {
		h := sha256.Sum256(a.data())
		a.hash = hex.EncodeToString(h[:8])
	})
	return a.hash
}

// gzipped returns the asset compressed (the bundles shrink to a quarter),
// made on first use, or nil when compressing does not pay.
func (a *asset) gzipped() []byte {
	a.gzipOnce.Do(func() {
		if len(a.data()) < 1024 {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
		if _, err := zw.Write(a.data()); err != nil || zw.Close() != nil {
			return
		}
		if buf.Len() < len(a.data())*9/10 {
			a.gz = buf.Bytes()
		}
	})
	return a.gz
}

// assets maps a name under assets/ ("playground.js",
// "vendor/graphiql@4.1.2/graphiql.min.js") to its file; vendorDirs maps a
// package name to its versioned folder ("graphiql" → "graphiql@4.1.2",
// "@graphiql/plugin-explorer" → "@graphiql/plugin-explorer@4.0.6").
var assets, vendorDirs = loadAssets()

func loadAssets() (map[string]*asset, map[string]string) {
	files := map[string]*asset{}
	dirs := map[string]string{}
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		files[name] = &asset{data: sync.OnceValue(func() []byte {
			b, err := assetFS.ReadFile(p)
			if err != nil {
				panic(fmt.Sprintf("web: read embedded %s: %v", p, err)) // listed by WalkDir above
			}
			return b
		})}
		if rest, ok := strings.CutPrefix(name, "vendor/"); ok {
			if dir, _, ok := cutPackage(rest); ok {
				if at := strings.LastIndex(dir, "@"); at > 0 {
					dirs[dir[:at]] = dir
				}
			}
		}
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("web: read embedded assets: %v", err))
	}
	return files, dirs
}

// assetURL returns the URL of an asset with its content hash, which makes
// it cacheable for good; an unknown name is a programming error.
func assetURL(name string) (string, error) {
	a, ok := assets[name]
	if !ok {
		return "", fmt.Errorf("web: no asset %q", name)
	}
	return AssetsPath + name + "?v=" + a.sum(), nil
}

// vendorURL returns the URL of a file of a vendored package, "graphiql/graphiql.min.js"
// or "@graphiql/plugin-explorer/index.umd.js", whatever version npm/package.json pins.
func vendorURL(file string) (string, error) {
	pkg, name, _ := cutPackage(file)
	dir, ok := vendorDirs[pkg]
	if !ok {
		return "", fmt.Errorf("web: package %q is not vendored", pkg)
	}
	return assetURL(path.Join("vendor", dir, name))
}

// cutPackage splits a path at the end of its npm package name, which is
// its first segment or, for a scoped package ("@graphiql/plugin-explorer"),
// its first two.
func cutPackage(p string) (pkg, rest string, ok bool) {
	n := 1
	if strings.HasPrefix(p, "@") {
		n = 2
	}
	parts := strings.SplitN(p, "/", n+1)
	if len(parts) <= n {
		return p, "", false
	}
	return strings.Join(parts[:n], "/"), parts[n], true
}

// Assets serves the embedded scripts, styles and bundles under AssetsPath.
// A request that names the current content hash (?v=, as the pages do) may
// be cached for a year; any other must revalidate against the ETag, so a
// stale page after an upgrade still gets fresh files. A client that
// accepts gzip gets it, compressed once per process (docs/playground.md
// says how much that saves). Other paths are 404:
// a router that renders its own 404 asks IsAsset first.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsAsset(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, AssetsPath)
		a := assets[name]
		h := w.Header()
		if r.URL.Query().Get("v") == a.sum() {
			h.Set("Cache-Control", immutable)
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		body, etag := a.data(), a.sum()
		h.Add("Vary", "Accept-Encoding")
		if r.Header.Get("Range") == "" && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			if gz := a.gzipped(); gz != nil {
				body, etag = gz, a.sum()+"-gzip"
				h.Set("Content-Encoding", "gzip")
			}
		}
		h.Set("ETag", `"`+etag+`"`)
		// ServeContent sets the type from the extension (nosniff is on),
		// and answers If-None-Match and ranges.
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}

// IsAsset reports whether a URL path names an asset Assets serves.
func IsAsset(urlPath string) bool {
	name, ok := strings.CutPrefix(urlPath, AssetsPath)
	_, found := assets[name]
	return ok && found && path.Base(name) != "SHA256SUMS"
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		enc, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
