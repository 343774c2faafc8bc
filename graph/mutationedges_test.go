package graph_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestMutationsLoadEdges: a mutation's result may select the item's owner;
// it answered INTERNAL_ERROR ("transaction has already been committed"),
// the item being bound to the service's ended transaction.
func TestMutationsLoadEdges(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "edges")
	cases := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"createItem", `mutation { createItem(input: {name: "x"}) { owner { id } } }`, nil, "createItem"},
		{"updateItem", `mutation($id: ID!) { updateItem(id: $id, input: {name: "y"}) { owner { id } } }`, map[string]any{"id": id}, "updateItem"},
		{"updateItem that changes nothing", `mutation($id: ID!) { updateItem(id: $id, input: {name: "y"}) { owner { id } } }`, map[string]any{"id": id}, "updateItem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := testutil.GQL(t, env, env.Alice.Token, tc.query, tc.vars).OK(t)
			if got := r.At(t, tc.field, "owner", "id"); got != env.Alice.UserID {
				t.Fatalf("owner %v, want %s", got, env.Alice.UserID)
			}
		})
	}
}
