package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/web"
)

// introspection is the core of GraphiQL's schema query: deeper than the
// depth limit, and allowed because introspection fields are not counted.
const introspection = `{ __schema { queryType { name } types { name kind fields(includeDeprecated: true) { name type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } } } } }`

// TestLimits: over-deep and over-complex operations are refused before any
// resolver runs, with a clear code; bad operations are VALIDATION_ERROR.
func TestLimits(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.GraphQLMaxDepth = 6
		c.GraphQLMaxComplexity = 200
	}))
	env.CreateItem(env.Alice, "a")

	cases := []struct {
		name  string
		query string
		code  string
		field string
	}{
		{"depth at the limit", `{ me { items { edges { node { owner { id } } } } } }`, "", ""},
		{"depth past the limit", `{ me { items { edges { node { owner { items { totalCount } } } } } } }`, "DEPTH_LIMIT_EXCEEDED", ""},
		{"depth counted through fragments", `query { me { ...F } } fragment F on User { items { edges { node { owner { items { totalCount } } } } } }`, "DEPTH_LIMIT_EXCEEDED", ""},
		{"complexity within the limit", `{ items(first: 10) { edges { node { id name } } } }`, "", ""},
		{"complexity past the limit", `{ items(first: 100) { edges { node { id name description } } } }`, "COMPLEXITY_LIMIT_EXCEEDED", ""},
		{"nested scans multiply", `{ items(first: 20) { edges { node { owner { items(where: {nameContains: "x"}) { totalCount } } } } } }`, "COMPLEXITY_LIMIT_EXCEEDED", ""},
		{"introspection is allowed", introspection, "", ""},
		{"page larger than the maximum", `{ me { id } items(first: 101) { totalCount } }`, "VALIDATION_ERROR", "first"},
		{"negative page", `{ items(last: -1) { totalCount } }`, "VALIDATION_ERROR", "last"},
		{"syntax error", `{ items { `, "VALIDATION_ERROR", ""},
		{"unknown field", `{ items { nope } }`, "VALIDATION_ERROR", ""},
		{"bad argument value", `{ items(first: 1, where: {createdAtGT: "yesterday"}) { edges { cursor } } }`, "VALIDATION_ERROR", ""},
		{"bad cursor", `{ items(after: "???") { totalCount } }`, "VALIDATION_ERROR", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, env, env.Alice.Token, c.query, nil)
			if r.Code() != c.code {
				t.Fatalf("code %q, want %q\n%s", r.Code(), c.code, r.Raw)
			}
			if c.code == "" {
				r.OK(t)
				return
			}
			if r.Errors[0].Message == "" {
				t.Errorf("no message: %s", r.Raw)
			}
			if c.field != "" && r.Errors[0].Extensions["field"] != c.field {
				t.Errorf("field %v, want %s", r.Errors[0].Extensions["field"], c.field)
			}
		})
	}
}

// TestTransports: GET serves queries but not mutations; only GET and POST
// exist; anonymous requests reach login; token failures keep REST's status
// but come GraphQL-shaped.
func TestTransports(t *testing.T) {
	env := testutil.New(t)
	get := func(q string, token string) testutil.GQLResponse {
		return testutil.DecodeGQL(t, env.Do(testutil.Request{Method: "GET", Path: "/graphql?query=" + url.QueryEscape(q), Token: token}))
	}
	t.Run("GET query", func(t *testing.T) {
		r := get(`{ me { id } }`, env.Alice.Token).OK(t)
		if r.At(t, "me", "id") != env.Alice.UserID {
			t.Fatalf("%s", r.Raw)
		}
	})
	t.Run("GET mutation refused", func(t *testing.T) {
		r := get(`mutation { deleteItem(id: "item_x") }`, env.Alice.Token)
		if r.Status == http.StatusOK || len(r.Errors) == 0 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("multipart refused", func(t *testing.T) {
		res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token,
			Body:    "--x\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{}\r\n--x--\r\n",
			Headers: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}})
		if res.Status == http.StatusOK {
			t.Fatalf("multipart accepted: %s", res.Body)
		}
	})
	t.Run("body over the limit", func(t *testing.T) {
		res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token,
			Body: `{"query":"` + strings.Repeat(" ", 2<<20) + `{ me { id } }"}`})
		r := testutil.DecodeGQL(t, res)
		if r.Status != http.StatusRequestEntityTooLarge || r.Code() != "PAYLOAD_TOO_LARGE" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("bad token is GraphQL-shaped", func(t *testing.T) {
		r := testutil.GQL(t, env, "forged", `{ me { id } }`, nil)
		if r.Status != http.StatusUnauthorized || r.Code() != "UNAUTHORIZED" || r.Data != nil || !strings.Contains(string(r.Raw), `"data":null`) {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		if strings.Contains(string(r.Raw), `"success"`) {
			t.Fatalf("REST envelope on /graphql: %s", r.Raw)
		}
	})
	t.Run("REST keeps its envelope", func(t *testing.T) {
		res := env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: "forged"})
		if res.ErrorCode() != "UNAUTHORIZED" || !strings.Contains(string(res.Body), `"success":false`) {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
	})
}

// TestPlayground: GraphiQL at /playground with its own policy (web), off
// with PLAYGROUND=false.
func TestPlayground(t *testing.T) {
	on := testutil.New(t)
	res := on.Do(testutil.Request{Method: "GET", Path: "/playground"})
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "graphiql.min.js") || !strings.Contains(string(res.Body), `data-endpoint="/graphql"`) {
		t.Fatalf("playground: %d %.200s", res.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != web.PlaygroundCSP {
		t.Errorf("CSP %q, want web.PlaygroundCSP", csp)
	}
	off := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.Playground = false }))
	if res := off.Do(testutil.Request{Method: "GET", Path: "/playground"}); res.Status != http.StatusNotFound {
		t.Fatalf("PLAYGROUND=false: %d", res.Status)
	} else if csp := res.Header.Get("Content-Security-Policy"); csp != "default-src 'none'; frame-ancestors 'none'" {
		t.Errorf("PLAYGROUND=false: the 404 has CSP %q, want the API's", csp)
	}
	if res := off.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: off.Alice.Token, Body: map[string]any{"query": "{ me { id } }"}}); res.Status != http.StatusOK {
		t.Fatalf("PLAYGROUND=false turned /graphql off: %d", res.Status)
	}
}
