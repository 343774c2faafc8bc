// Package web serves the server's two HTML pages, the GraphiQL playground
// and the Redoc API docs, and every script and style they load (GraphiQL,
// React, Redoc and the pages' own), embedded in the binary: the pages work
// with no internet access and load nothing from another origin, which
// their Content-Security-Policy enforces (DESIGN §5).
package web

import (
	"embed"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"sync"
)

//go:embed pages/*.html
var pageFS embed.FS

// favicon is the icon browsers ask every page of the server for
// (/favicon.ico): without it each page load logged a 404.
//
//go:embed favicon.ico
var favicon []byte

// A page names its assets {{asset "playground.js"}} or
// {{vendor "graphiql/graphiql.min.js"}} and its values {{.Endpoint}}; that
// is all the templating the pages need, so they are filled in here rather
// than by html/template, whose reflective method calls would keep every
// method of every type in the binary (the linker cannot prune any once
// reflect.Value.MethodByName is reachable: several MB).
var placeholder = regexp.MustCompile(`\{\{(?:(asset|vendor) "([^"]+)"|\.(\w+))\}\}`)

// render fills in a page's placeholders, HTML-escaped; an unknown asset or
// value is an error.
func render(name string, values map[string]string) ([]byte, error) {
	src, err := pageFS.ReadFile("pages/" + name)
	if err != nil {
		return nil, err
	}
	var firstErr error
	out := placeholder.ReplaceAllStringFunc(string(src), func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		var v string
		var err error
		switch {
		case sub[1] == "asset":
			v, err = assetURL(sub[2])
		case sub[1] == "vendor":
			v, err = vendorURL(sub[2])
		default:
			var ok bool
			if v, ok = values[sub[3]]; !ok {
				err = fmt.Errorf("web: %s has no value %s", name, sub[3])
			}
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return html.EscapeString(v)
	})
	return []byte(out), firstErr
}

// The pages' policies allow the server's own scripts, styles and requests
// and nothing else: no inline or foreign script, no framing, no form posts.
// Fonts and icons come as data: URIs inside the bundled stylesheets.
const (
	// PlaygroundCSP lets GraphiQL run; React sets style attributes through
	// the DOM and CodeMirror positions its cursors and gutters that way, which
	// a policy does not govern, so no inline style is allowed either.
	PlaygroundCSP = "default-src 'none'; script-src 'self'; style-src 'self'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	// DocsCSP lets Redoc run: styled-components writes <style> elements
	// ('unsafe-inline' for styles only), search runs in a worker Redoc
	// builds from a blob: URL, and the document is fetched from this server.
	DocsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// Playground returns the GraphiQL page for the GraphQL endpoint at
// endpoint ("/graphql"): a sign-in form that trades an API key for a token
// (kept in the tab's sessionStorage only), GraphiQL sending that token, and
// example queries.
func Playground(endpoint string) http.Handler {
	return page("playground.html", PlaygroundCSP, map[string]string{"Endpoint": endpoint})
}

// Docs returns the API docs page: Redoc rendering the OpenAPI document at
// specURL ("/v1/openapi.json").
func Docs(specURL string) http.Handler {
	return page("docs.html", DocsCSP, map[string]string{"SpecURL": specURL})
}

// page renders a page once, on its first visit (rendering hashes the
// bundles it names, which a server nobody browses need not do); it names its
// assets by content hash, so it is revalidated on each visit (it is small)
// while they are cached for good.
func page(name, csp string, values map[string]string) http.Handler {
	body := sync.OnceValue(func() []byte {
		b, err := render(name, values)
		if err != nil {
			panic("web: render " + name + ": " + err.Error()) // the pages and assets are embedded
		}
		return b
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		_, _ = w.Write(body())
	})
}

// Favicon serves the server's icon, for /favicon.ico. Its URL never
// changes, so browsers keep it a day before they ask again.
func Favicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "image/x-icon")
		h.Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(favicon)
	})
}
