package server_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestResolverErrorCodes: an error a resolver meets (here the database
// gone, after the caller's token was checked and cached) reaches the client
// with the contract's code, at any depth of the query, as on REST.
func TestResolverErrorCodes(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "x")
	testutil.GQL(t, env, env.Alice.Token, `{ me { id } }`, nil).OK(t)
	if err := env.App.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, query string }{
		{"root connection", `{ items { totalCount edges { node { id } } } }`},
		{"root object", `{ me { email } }`},
		{"one item", `{ item(id: "` + id + `") { name } }`},
		{"node", `{ node(id: "` + id + `") { id } }`},
		{"mutation", `mutation { createItem(input: {name: "y"}) { id } }`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.GQL(t, env, env.Alice.Token, c.query, nil)
			if r.Code() != "UNAVAILABLE" {
				t.Fatalf("code %q, want UNAVAILABLE: %s", r.Code(), r.Raw)
			}
		})
	}
}
