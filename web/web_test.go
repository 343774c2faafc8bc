package web_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/itemsvc/web"
)

// get serves one GET request with h.
func get(h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var srcOrHref = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// TestPagesLoadOnlyTheirOwnAssets: each page has its policy, loads no
// inline script and nothing from another origin, and every script and
// style it names is served, cacheable for good.
func TestPagesLoadOnlyTheirOwnAssets(t *testing.T) {
	cases := []struct {
		name     string
		page     http.Handler
		csp      string
		contains []string
		scripts  int
	}{
		{"playground", web.Playground("/graphql"), web.PlaygroundCSP,
			[]string{`data-endpoint="/graphql"`, `id="signin"`, `id="signout"`, `type="password"`, `id="view-browse"`, `id="browse"`,
				`id="view-users"`, `id="view-keys"`, `id="view-webhooks"`, `id="view-audit"`, `id="points"`,
				`id="view-backups"`, `id="backup-create"`, `id="view-health"`, `id="health-rate"`, `href="/favicon.ico"`,
				`id="view-events"`, `id="events"`, `id="item-create"`, `id="item-detail"`}, 7},
		{"docs", web.Docs("/v1/openapi.json"), web.DocsCSP,
			[]string{`<redoc spec-url="/v1/openapi.json">`, `href="/v1/openapi.json"`, `href="/favicon.ico"`}, 1},
	}
	assets := web.Assets()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(tc.page, "/"+tc.name)
			body := r.Body.String()
			if r.Code != 200 || r.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("%d %s", r.Code, r.Header().Get("Content-Type"))
			}
			if got := r.Header().Get("Content-Security-Policy"); got != tc.csp {
				t.Errorf("CSP = %q, want %q", got, tc.csp)
			}
			for _, s := range tc.contains {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %s", s)
				}
			}
			if n := strings.Count(body, "<script"); n != tc.scripts || strings.Count(body, `<script src="/assets/`) != n {
				t.Errorf("%d scripts, want %d, all with src under /assets/:\n%s", n, tc.scripts, body)
			}
			for _, m := range srcOrHref.FindAllStringSubmatch(body, -1) {
				u := m[1]
				if strings.HasPrefix(u, "/v1/") {
					continue
				}
				if u == "/favicon.ico" { // the server's own (TestFavicon)
					continue
				}
				if !strings.HasPrefix(u, web.AssetsPath) {
					t.Errorf("the page loads %s, not one of the server's assets", u)
					continue
				}
				a := get(assets, u)
				if a.Code != 200 || a.Body.Len() == 0 || a.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
					t.Errorf("%s: %d, %d bytes, Cache-Control %q", u, a.Code, a.Body.Len(), a.Header().Get("Cache-Control"))
				}
			}
		})
	}
}

// TestFavicon: the icon every page load asks for is served from the
// binary, as an icon the browser can draw.
func TestFavicon(t *testing.T) {
	r := get(web.Favicon(), "/favicon.ico")
	if r.Code != 200 || r.Header().Get("Content-Type") != "image/x-icon" || r.Header().Get("Cache-Control") != "public, max-age=86400" {
		t.Fatalf("%d %q %q", r.Code, r.Header().Get("Content-Type"), r.Header().Get("Cache-Control"))
	}
	// An ICO file: reserved 0, type 1 (icon), one or more images.
	if b := r.Body.Bytes(); len(b) < 22 || !bytes.Equal(b[:4], []byte{0, 0, 1, 0}) || b[4] == 0 {
		t.Fatalf("not an icon: % x", r.Body.Bytes()[:min(r.Body.Len(), 22)])
	}
}

// TestPolicies: the pages allow nothing but this server; only Redoc gets
// inline styles and a blob: worker.
func TestPolicies(t *testing.T) {
	for name, csp := range map[string]string{"playground": web.PlaygroundCSP, "docs": web.DocsCSP} {
		for _, bad := range []string{"http:", "https:", "*", "unsafe-eval", "script-src 'self' 'unsafe-inline'"} {
			if strings.Contains(csp, bad) {
				t.Errorf("%s CSP allows %s: %s", name, bad, csp)
			}
		}
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s CSP lacks %s: %s", name, want, csp)
			}
		}
	}
	if strings.Contains(web.PlaygroundCSP, "unsafe-inline") || strings.Contains(web.PlaygroundCSP, "blob:") {
		t.Errorf("playground CSP: %s", web.PlaygroundCSP)
	}
}

// TestAssets: types, caching by content hash, revalidation, and 404s.
func TestAssets(t *testing.T) {
	h := web.Assets()
	page := get(web.Playground("/graphql"), "/playground").Body.String()
	js := regexp.MustCompile(`/assets/playground\.js\?v=[0-9a-f]+`).FindString(page)
	css := regexp.MustCompile(`/assets/vendor/graphiql@[^/]+/graphiql\.min\.css\?v=[0-9a-f]+`).FindString(page)
	if js == "" || css == "" {
		t.Fatalf("the playground names no playground.js or graphiql.min.css:\n%s", page)
	}
	cases := []struct {
		name, target, ifNoneMatch string
		status                    int
		contentType, cache        string
	}{
		{"script by hash", js, "", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"},
		{"style by hash", css, "", 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable"},
		{"without the hash", "/assets/playground.js", "", 200, "text/javascript; charset=utf-8", "no-cache"},
		{"another hash", "/assets/playground.js?v=0123456789abcdef", "", 200, "text/javascript; charset=utf-8", "no-cache"},
		{"unknown", "/assets/nope.js", "", 404, "", ""},
		{"folder", "/assets/vendor", "", 404, "", ""},
		{"sums are not served", "/assets/vendor/SHA256SUMS", "", 404, "", ""},
		{"escape", "/assets/../web.go", "", 404, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(h, tc.target)
			if r.Code != tc.status {
				t.Fatalf("%s: %d, want %d", tc.target, r.Code, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := r.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := r.Header().Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control = %q, want %q", got, tc.cache)
			}
			etag := r.Header().Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			if again := get(h, tc.target, "If-None-Match", etag); again.Code != http.StatusNotModified {
				t.Errorf("revalidation with the ETag: %d, want 304", again.Code)
			}
		})
	}
	if !web.IsAsset("/assets/playground.js") || web.IsAsset("/assets/vendor/SHA256SUMS") || web.IsAsset("/docs") {
		t.Error("IsAsset")
	}
}

// TestAssetsGzip: a client that accepts gzip gets the same bytes gzipped,
// under its own ETag; ranges and refusals get them plain.
func TestAssetsGzip(t *testing.T) {
	h := web.Assets()
	const target = "/assets/playground.js"
	plain := get(h, target)
	cases := []struct {
		name    string
		headers []string
		gzipped bool
	}{
		{"gzip", []string{"Accept-Encoding", "gzip, deflate, br"}, true},
		{"gzip with a weight", []string{"Accept-Encoding", "br;q=1.0, gzip;q=0.8"}, true},
		{"gzip refused", []string{"Accept-Encoding", "gzip;q=0"}, false},
		{"no header", nil, false},
		{"a range", []string{"Accept-Encoding", "gzip", "Range", "bytes=0-99"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(h, target, tc.headers...)
			if got := r.Header().Get("Content-Encoding") == "gzip"; got != tc.gzipped {
				t.Fatalf("gzipped = %v, want %v", got, tc.gzipped)
			}
			if !strings.Contains(r.Header().Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary = %q", r.Header().Get("Vary"))
			}
			if !tc.gzipped {
				return
			}
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(b, plain.Body.Bytes()) {
				t.Fatalf("gunzipped body differs from the plain one (%v)", err)
			}
			if r.Header().Get("ETag") == plain.Header().Get("ETag") {
				t.Error("the gzipped body has the plain body's ETag")
			}
		})
	}
}

// TestVendoredAssetsMatchLock: the committed bundles are the files
// SHA256SUMS lists, of the very versions npm/package-lock.json locks. CI
// also copies them afresh from npm (go generate after npm ci) and fails on
// any difference.
func TestVendoredAssetsMatchLock(t *testing.T) {
	lockFile, err := os.ReadFile("npm/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lockFile, &lock); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("assets/vendor/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hash, rel, ok := strings.Cut(sc.Text(), "  ")
		dir := path.Dir(rel) // <package>@<version>, the package maybe scoped
		at := strings.LastIndex(dir, "@")
		if !ok || at <= 0 {
			t.Fatalf("SHA256SUMS: malformed line %q", sc.Text())
		}
		pkg, version := dir[:at], dir[at+1:]
		if got := lock.Packages["node_modules/"+pkg].Version; got != version {
			t.Errorf("%s: vendored %s@%s, the lock has %q", rel, pkg, version, got)
		}
		b, err := os.ReadFile("assets/vendor/" + rel)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hash {
			t.Errorf("%s does not match SHA256SUMS: run `npm ci` in web/npm, then `go generate ./web`", rel)
		}
		seen[pkg] = true
	}
	for _, pkg := range []string{"graphiql", "@graphiql/plugin-explorer", "react", "react-dom", "redoc"} {
		if !seen[pkg] {
			t.Errorf("%s is not vendored", pkg)
		}
	}
}
