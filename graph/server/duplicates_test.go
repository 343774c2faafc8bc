package server_test

import (
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestDuplicateNames: a GraphQL POST body that repeats a name in any of its
// objects (the variables included) is 400 VALIDATION_ERROR naming it, over
// plain POST and over SSE, as on REST: encoding/json would run the last of
// them (a read-only key's createAPIKey that makes a write key).
func TestDuplicateNames(t *testing.T) {
	env := testutil.New(t)
	alice := env.Alice.Token
	const create = `mutation($in: CreateAPIKeyInput!) { createAPIKey(input: $in) { apiKey { id scopes } } }`
	for _, c := range []struct {
		name, accept, body, field string
	}{
		{"scopes twice in the variables", "application/json",
			`{"query":"` + create + `","variables":{"in":{"scopes":["read"],"scopes":["read","write"]}}}`, "variables.in.scopes"},
		{"the query twice", "application/graphql-response+json",
			`{"query":"{ me { id } }","query":"mutation { deleteItem(id: \"item_x\") }"}`, "query"},
		{"variables twice, over SSE", "text/event-stream",
			`{"query":"{ me { id } }","variables":{},"variables":{"x":1}}`, "variables"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: alice, Body: c.body, Headers: map[string]string{"Accept": c.accept}})
			if res.Status != 400 || !strings.Contains(string(res.Body), `"VALIDATION_ERROR"`) || !strings.Contains(string(res.Body), `"field":"`+c.field+`"`) {
				t.Fatalf("%d %s; want 400 VALIDATION_ERROR naming %s", res.Status, res.Body, c.field)
			}
		})
	}
	n, err := env.App.DB.Client.APIKey.Query().Count(testutil.SystemContext(t))
	if err != nil || n != 3 {
		t.Fatalf("%d keys (%v), want the 3 the test began with", n, err)
	}
}
