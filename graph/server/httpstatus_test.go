package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestHTTPStatusRules holds /graphql to the GraphQL-over-HTTP
// specification's status rules, by the response media type the client
// accepts: a document that does not parse or validate, or variables that do
// not coerce, answer 200 under application/json (no Accept, */*, or
// application/json) and 400 with no data entry under
// application/graphql-response+json; a request that is not one (no query,
// a body that is not JSON) is 400 under both; a refusal with a REST status
// of its own keeps it under both, whether gqlgen or the shared middleware
// (a bad token, a media type) refused it. Every error keeps its contract
// code.
func TestHTTPStatusRules(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.GraphQLMaxComplexity = 300 }))
	const (
		jsonType = "application/json"
		gqlType  = "application/graphql-response+json"
	)
	post := func(accept, token string, body any) testutil.Request {
		return testutil.Request{Method: "POST", Path: "/graphql", Token: token, Body: body, Headers: map[string]string{"Accept": accept}}
	}
	get := func(accept, query string) testutil.Request {
		return testutil.Request{Method: "GET", Path: "/graphql?query=" + url.QueryEscape(query), Token: env.Alice.Token, Headers: map[string]string{"Accept": accept}}
	}
	alice := env.Alice.Token
	parse := map[string]any{"query": "{"}
	validation := map[string]any{"query": "{ nope }"}
	coercion := map[string]any{"query": "query($id: ID!) { item(id: $id) { id } }", "variables": map[string]any{"id": nil}}
	noQuery := map[string]any{"qeury": "{ me { id } }"}

	for _, c := range []struct {
		name   string
		req    testutil.Request
		status int
		code   string
		media  string
		data   bool // the response has a data entry
	}{
		{"parse, no Accept", post("", alice, parse), 200, "VALIDATION_ERROR", jsonType, true},
		{"parse, */*", post("*/*", alice, parse), 200, "VALIDATION_ERROR", jsonType, true},
		{"parse, json", post(jsonType, alice, parse), 200, "VALIDATION_ERROR", jsonType, true},
		{"parse, graphql-response", post(gqlType, alice, parse), 400, "VALIDATION_ERROR", gqlType, false},
		{"parse, both, graphql-response first", post(gqlType+", "+jsonType+";q=0.9", alice, parse), 400, "VALIDATION_ERROR", gqlType, false},
		{"validation, json", post(jsonType, alice, validation), 200, "VALIDATION_ERROR", jsonType, true},
		{"validation, graphql-response", post(gqlType, alice, validation), 400, "VALIDATION_ERROR", gqlType, false},
		{"coercion, json", post(jsonType, alice, coercion), 200, "VALIDATION_ERROR", jsonType, true},
		{"coercion, graphql-response", post(gqlType, alice, coercion), 400, "VALIDATION_ERROR", gqlType, false},
		{"GET parse, json", get(jsonType, "{"), 200, "VALIDATION_ERROR", jsonType, true},
		{"GET parse, graphql-response", get(gqlType, "{"), 400, "VALIDATION_ERROR", gqlType, false},
		{"GET validation, graphql-response", get(gqlType, "{ nope }"), 400, "VALIDATION_ERROR", gqlType, false},
		{"no query, json", post(jsonType, alice, noQuery), 400, "VALIDATION_ERROR", jsonType, true},
		{"no query, graphql-response", post(gqlType, alice, noQuery), 400, "VALIDATION_ERROR", gqlType, false},
		{"body not JSON, graphql-response", post(gqlType, alice, `{"query":`), 400, "VALIDATION_ERROR", gqlType, false},
		{"over the complexity, json", post(jsonType, alice, map[string]any{"query": "{ items(first: 100) { edges { node { id name description } } } }"}), 200, "COMPLEXITY_LIMIT_EXCEEDED", jsonType, true},
		{"over the complexity, graphql-response", post(gqlType, alice, map[string]any{"query": "{ items(first: 100) { edges { node { id name description } } } }"}), 400, "COMPLEXITY_LIMIT_EXCEEDED", gqlType, false},
		{"anonymous data query, json", post(jsonType, "", map[string]any{"query": "{ me { id } }"}), 401, "UNAUTHORIZED", jsonType, true},
		{"anonymous data query, graphql-response", post(gqlType, "", map[string]any{"query": "{ me { id } }"}), 401, "UNAUTHORIZED", gqlType, false},
		{"bad token, json", post(jsonType, "not.a.token", map[string]any{"query": "{ me { id } }"}), 401, "UNAUTHORIZED", jsonType, true},
		{"bad token, graphql-response", post(gqlType, "not.a.token", map[string]any{"query": "{ me { id } }"}), 401, "UNAUTHORIZED", gqlType, false},
		{"body not JSON media type, graphql-response", testutil.Request{Method: "POST", Path: "/graphql", Token: alice, Body: "query=x",
			Headers: map[string]string{"Content-Type": "text/plain", "Accept": gqlType}}, 415, "UNSUPPORTED_MEDIA_TYPE", gqlType, false},
		{"mutation over GET, graphql-response", get(gqlType, `mutation { deleteItem(id: "item_x") }`), 405, "METHOD_NOT_ALLOWED", gqlType, false},
		{"a field that fails, graphql-response", post(gqlType, alice, map[string]any{"query": `{ item(id: "item_01m80rv1h8d119v06vwk93e0ze") { id } }`}), 200, "NOT_FOUND", gqlType, true},
		{"ok, graphql-response", post(gqlType, alice, map[string]any{"query": "{ me { id } }"}), 200, "", gqlType, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := env.Do(c.req)
			var body map[string]json.RawMessage
			if err := json.Unmarshal(res.Body, &body); err != nil {
				t.Fatalf("%d, not JSON: %s", res.Status, res.Body)
			}
			if res.Status != c.status {
				t.Errorf("status %d, want %d: %s", res.Status, c.status, res.Body)
			}
			if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, c.media) {
				t.Errorf("Content-Type %q, want %q", got, c.media)
			}
			if _, ok := body["data"]; ok != c.data {
				t.Errorf("data entry: %v, want %v: %s", ok, c.data, res.Body)
			}
			r := testutil.DecodeGQL(t, res)
			if r.Code() != c.code {
				t.Errorf("code %q, want %q: %s", r.Code(), c.code, res.Body)
			}
		})
	}
}
