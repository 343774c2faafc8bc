package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/internal/testutil"
)

// mutationDocs returns, for every mutation of the schema but login, a
// document calling it with literal arguments of the right types (every
// ID the given one), so that it passes validation and reaches the checks
// that run before a resolver.
func mutationDocs(id string) map[string]string {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	var literal func(typ *ast.Type) string
	literal = func(typ *ast.Type) string {
		if typ.Elem != nil {
			return "[" + literal(typ.Elem) + "]"
		}
		def := schema.Types[typ.NamedType]
		switch def.Kind {
		case ast.Enum:
			return def.EnumValues[0].Name
		case ast.InputObject:
			var fields []string
			for _, f := range def.Fields {
				if f.Type.NonNull && f.DefaultValue == nil {
					fields = append(fields, f.Name+": "+literal(f.Type))
				}
			}
			return "{" + strings.Join(fields, ", ") + "}"
		}
		switch def.Name {
		case "Int", "Float":
			return "1"
		case "Boolean":
			return "true"
		case "ID":
			return fmt.Sprintf("%q", id)
		}
		return `"http://127.0.0.1:9/x"`
	}
	docs := map[string]string{}
	for _, f := range schema.Mutation.Fields {
		if f.Name == "login" || strings.HasPrefix(f.Name, "__") {
			continue
		}
		var args []string
		for _, a := range f.Arguments {
			if a.Type.NonNull && a.DefaultValue == nil {
				args = append(args, a.Name+": "+literal(a.Type))
			}
		}
		doc := "mutation { " + f.Name
		if len(args) > 0 {
			doc += "(" + strings.Join(args, ", ") + ")"
		}
		if k := schema.Types[f.Type.Name()].Kind; k == ast.Object || k == ast.Interface || k == ast.Union {
			doc += " { __typename }"
		}
		docs[f.Name] = doc + " }"
	}
	return docs
}

// TestReadOnlyKeyMutatesNothing: with a key that has only the read scope,
// every mutation of the schema (read from it) but login is refused with
// PERMISSION_DENIED (403 over HTTP, details.reason "read-only key") over
// POST, SSE and graphql-ws, and over GET (405, as every mutation is there),
// and nothing changes; queries and login still work.
func TestReadOnlyKeyMutatesNothing(t *testing.T) {
	env, srv := newSocketEnv(t)
	ro := env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
	item := env.CreateItem(env.Alice, "kept")
	docs := mutationDocs(item)
	if len(docs) < 9 {
		t.Fatalf("found %d mutations in the schema; it has more", len(docs))
	}
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)

	if r := testutil.GQL(t, env, ro.Token, `{ me { id } items { totalCount } }`, nil); r.Code() != "" {
		t.Fatalf("a query with a read-only key: %s", r.Raw)
	}
	if r := testutil.GQL(t, env, "", fmt.Sprintf(`mutation { login(apiKey: %q) { accessToken } }`, ro.Key), nil); r.Code() != "" {
		t.Fatalf("login with a read-only key: %s", r.Raw)
	}
	for _, name := range names {
		doc := docs[name]
		t.Run(name, func(t *testing.T) {
			t.Run("POST", func(t *testing.T) {
				r := testutil.GQL(t, env, ro.Token, doc, nil)
				if r.Status != http.StatusForbidden || r.Code() != "PERMISSION_DENIED" || r.Errors[0].Extensions["reason"] != "read-only key" {
					t.Fatalf("%s: %d %s; want 403 PERMISSION_DENIED, reason read-only key", doc, r.Status, r.Raw)
				}
			})
			t.Run("GET", func(t *testing.T) {
				res := env.Do(testutil.Request{Method: "GET", Path: "/graphql?query=" + url.QueryEscape(doc), Token: ro.Token})
				if res.Status != http.StatusMethodNotAllowed {
					t.Fatalf("%s over GET: %d %s; want 405", doc, res.Status, res.Body)
				}
			})
			t.Run("SSE", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				resp := testutil.PostSSE(ctx, t, srv, ro.Token, doc, nil)
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(body), `"PERMISSION_DENIED"`) || !strings.Contains(string(body), `"read-only key"`) {
					t.Fatalf("%s over SSE: %d %s; want PERMISSION_DENIED, reason read-only key", doc, resp.StatusCode, body)
				}
			})
			t.Run("WebSocket", func(t *testing.T) {
				c := dialWS(t, srv)
				c.init(ro.Token)
				c.subscribe("m", doc)
				if payload, code := c.result("m"); code != "PERMISSION_DENIED" || !strings.Contains(string(payload), `"read-only key"`) {
					t.Fatalf("%s over graphql-ws: %s; want PERMISSION_DENIED, reason read-only key", doc, payload)
				}
			})
		})
	}

	r := testutil.GQL(t, env, env.Alice.Token, fmt.Sprintf(`{ item(id: %q) { name } items { totalCount } }`, item), nil).OK(t)
	if r.At(t, "item", "name") != "kept" || r.At(t, "items", "totalCount") != float64(1) {
		t.Fatalf("after the refused mutations: %s; want the item kept and alone", r.Raw)
	}
}
