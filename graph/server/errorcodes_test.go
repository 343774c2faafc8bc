package server_test

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestEveryErrorHasCode sweeps the ways a /graphql request can fail (before
// gqlgen, in its transports, in parsing and validation, in input coercion,
// in the limits, in resolvers and in ent's node lookups) and holds each
// answer to the contract: GraphQL-shaped, every error with extensions.code,
// the expected HTTP status, and the field a validation error is about.
func TestEveryErrorHasCode(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.GraphQLMaxDepth = 6
		c.GraphQLMaxComplexity = 300
	}))
	own := env.CreateItem(env.Alice, "own")
	bobs := env.CreateItem(env.Bob, "bob's")
	const missing = "item_01m80rv1h8d119v06vwk93e0ze"
	post := func(query string, vars map[string]any) testutil.Request {
		body := map[string]any{"query": query}
		if vars != nil {
			body["variables"] = vars
		}
		return testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: body}
	}
	get := func(params string) testutil.Request {
		return testutil.Request{Method: "GET", Path: "/graphql?" + params, Token: env.Alice.Token}
	}
	q := url.QueryEscape

	cases := []struct {
		name   string
		req    testutil.Request
		status int
		codes  []string // extensions.code of each error, in order
		field  string   // extensions.field of the first error
		allow  string   // the Allow header
	}{
		// Transport and HTTP.
		{"mutation over GET", get("query=" + q(`mutation { deleteItem(id: "`+own+`") }`)), 405, []string{"METHOD_NOT_ALLOWED"}, "", "POST"},
		{"PUT", testutil.Request{Method: "PUT", Path: "/graphql", Token: env.Alice.Token, Body: map[string]any{"query": "{ me { id } }"}}, 405, []string{"METHOD_NOT_ALLOWED"}, "", "GET, POST"},
		{"DELETE", testutil.Request{Method: "DELETE", Path: "/graphql", Token: env.Alice.Token}, 405, []string{"METHOD_NOT_ALLOWED"}, "", "GET, POST"},
		{"body not JSON media type", testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: "query=x", Headers: map[string]string{"Content-Type": "text/plain"}}, 415, []string{"UNSUPPORTED_MEDIA_TYPE"}, "", ""},
		{"body without Content-Type is JSON", testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: `{"query":"{ nope }"}`, Headers: map[string]string{"Content-Type": ""}}, 200, []string{"VALIDATION_ERROR"}, "", ""},
		{"body is not JSON", testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: `{"query":`}, 400, []string{"VALIDATION_ERROR"}, "body", ""},
		{"body over 1 MiB", testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: `{"query":"` + strings.Repeat(" ", 1<<20) + `{ me { id } }"}`}, 413, []string{"PAYLOAD_TOO_LARGE"}, "", ""},
		{"GET variables not JSON", get("query=" + q(`query($id: ID!) { item(id: $id) { id } }`) + "&variables=" + q("{")), 400, []string{"VALIDATION_ERROR"}, "variables", ""},
		{"GET variables not an object", get("query=" + q(`query($id: ID!) { item(id: $id) { id } }`) + "&variables=" + q("[1]")), 400, []string{"VALIDATION_ERROR"}, "variables", ""},
		{"GET without a query", get(""), 400, []string{"VALIDATION_ERROR"}, "query", ""},
		{"GET asking to upgrade", testutil.Request{Method: "GET", Path: "/graphql?query=" + q("{ me { id } }"), Token: env.Alice.Token, Headers: map[string]string{"Upgrade": "websocket"}}, 400, []string{"VALIDATION_ERROR"}, "request", ""},

		// Authentication and rate limits (before the operation runs).
		{"no token", testutil.Request{Method: "POST", Path: "/graphql", Body: map[string]any{"query": "{ me { id } }"}}, 401, []string{"UNAUTHORIZED"}, "", ""},
		{"forged token", testutil.Request{Method: "POST", Path: "/graphql", Token: "not.a.token", Body: map[string]any{"query": "{ me { id } }"}}, 401, []string{"UNAUTHORIZED"}, "", ""},

		// Parsing and validation.
		{"does not parse", post(`{ me { id }`, nil), 200, []string{"VALIDATION_ERROR"}, "", ""},
		{"unknown field", post(`{ nope }`, nil), 200, []string{"VALIDATION_ERROR"}, "", ""},
		{"unknown operation name", testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: map[string]any{"query": "query A { me { id } }", "operationName": "B"}}, 200, []string{"VALIDATION_ERROR"}, "", ""},
		{"missing argument", post(`{ item { id } }`, nil), 200, []string{"VALIDATION_ERROR"}, "", ""},
		{"bad enum literal", post(`{ items(where: {status: gone}) { totalCount } }`, nil), 200, []string{"VALIDATION_ERROR"}, "status", ""},
		{"bad enum in an input", post(`mutation { createItem(input: {name: "n", status: gone}) { id } }`, nil), 200, []string{"VALIDATION_ERROR"}, "status", ""},
		{"bad enum in a variable", post(`mutation($in: CreateItemInput!) { createItem(input: $in) { id } }`, map[string]any{"in": map[string]any{"name": "n", "status": "gone"}}), 200, []string{"VALIDATION_ERROR"}, "status", ""},
		{"wrong scalar type", post(`{ items(first: "ten") { totalCount } }`, nil), 200, []string{"VALIDATION_ERROR"}, "first", ""},
		{"missing variable", post(`query($id: ID!) { item(id: $id) { id } }`, nil), 200, []string{"VALIDATION_ERROR"}, "id", ""},

		// Limits.
		{"depth", post(`{ me { items { edges { node { owner { items { totalCount } } } } } } }`, nil), 200, []string{"DEPTH_LIMIT_EXCEEDED"}, "", ""},
		{"complexity", post(`{ items(first: 100) { edges { node { id name description } } } }`, nil), 200, []string{"COMPLEXITY_LIMIT_EXCEEDED"}, "", ""},
		{"page size", post(`{ items(first: 101) { totalCount } }`, nil), 200, []string{"VALIDATION_ERROR"}, "first", ""},

		// Arguments gqlgen cannot decode, and resolvers.
		{"cursor after", post(`{ items(after: "bogus") { totalCount } }`, nil), 200, []string{"VALIDATION_ERROR"}, "after", ""},
		{"cursor before", post(`{ items(last: 2, before: "!!") { totalCount } }`, nil), 200, []string{"VALIDATION_ERROR"}, "before", ""},
		{"service validation", post(`mutation { createItem(input: {name: "  "}) { id } }`, nil), 200, []string{"VALIDATION_ERROR"}, "name", ""},
		{"unknown item", post(`{ item(id: "`+missing+`") { id } }`, nil), 200, []string{"NOT_FOUND"}, "", ""},
		{"another's item", post(`{ item(id: "`+bobs+`") { id } }`, nil), 200, []string{"PERMISSION_DENIED"}, "", ""},
		{"another's node", post(`{ node(id: "`+bobs+`") { id } }`, nil), 200, []string{"PERMISSION_DENIED"}, "", ""},
		{"a key's id as a node", post(`{ node(id: "`+env.Alice.KeyID+`") { id } }`, nil), 200, []string{"NOT_FOUND"}, "", ""},
		{"nodes, one error per id", post(`{ nodes(ids: ["`+own+`", "`+bobs+`", "`+missing+`", "`+env.Bob.UserID+`", "nonsense"]) { id } }`, nil), 200,
			[]string{"PERMISSION_DENIED", "NOT_FOUND", "PERMISSION_DENIED", "NOT_FOUND"}, "", ""},
		{"users as a user", post(`{ users { totalCount } }`, nil), 200, []string{"PERMISSION_DENIED"}, "", ""},
		{"invalid API key", testutil.Request{Method: "POST", Path: "/graphql", Body: map[string]any{"query": `mutation { login(apiKey: "sk_live_` + strings.Repeat("a", 40) + `") { accessToken } }`}}, 200, []string{"INVALID_API_KEY"}, "", ""},
		{"errors capped", post(`{ `+strings.Repeat(`a: nope `, 30)+`}`, nil), 200, slices.Repeat([]string{"VALIDATION_ERROR"}, 20), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := env.Do(c.req)
			checkCoded(t, res, c.status, c.codes, c.field)
			if got := res.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
		})
	}

	t.Run("chunked body over 1 MiB", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/graphql", strings.NewReader(`{"query":"`+strings.Repeat(" ", 1<<20)+`{ me { id } }"}`))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		checkCoded(t, env.Serve(req), 413, []string{"PAYLOAD_TOO_LARGE"}, "")
	})

	t.Run("rate limited", func(t *testing.T) {
		limited := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.RateLimitPerMinute = 1 }))
		req := testutil.Request{Method: "POST", Path: "/graphql", Token: limited.Alice.Token, Body: map[string]any{"query": "{ me { id } }"}}
		checkCoded(t, limited.Do(req), 200, nil, "")
		checkCoded(t, limited.Do(req), 429, []string{"RATE_LIMITED"}, "")
	})
}

// checkCoded holds a /graphql answer to the contract: the status, a
// GraphQL-shaped body whose every error has extensions.code (codes, when
// given, in order) and the field of the first error.
func checkCoded(t *testing.T, res *testutil.Response, status int, codes []string, field string) {
	t.Helper()
	r := testutil.DecodeGQL(t, res)
	if r.Status != status {
		t.Errorf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if codes == nil && status == 200 {
		if len(r.Errors) > 0 {
			t.Errorf("errors: %s", r.Raw)
		}
		return
	}
	if len(r.Errors) == 0 {
		t.Fatalf("no errors: %s", r.Raw)
	}
	for i, e := range r.Errors {
		code, _ := e.Extensions["code"].(string)
		if code == "" || e.Message == "" {
			t.Errorf("error %d without a code or message: %s", i, r.Raw)
		}
		if codes != nil && (i >= len(codes) || code != codes[i]) {
			t.Errorf("error %d has code %q, want %v: %s", i, code, codes, r.Raw)
		}
	}
	if codes != nil && len(r.Errors) != len(codes) {
		t.Errorf("%d errors, want %d: %s", len(r.Errors), len(codes), r.Raw)
	}
	if got, _ := r.Errors[0].Extensions["field"].(string); got != field {
		t.Errorf("field %q, want %q: %s", got, field, r.Raw)
	}
	if field != "" && r.Errors[0].Extensions["reason"] == nil {
		t.Errorf("a field without a reason: %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), `"success"`) {
		t.Errorf("REST envelope on /graphql: %s", r.Raw)
	}
}
