package graph_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/testutil"
)

// itemFields selects on GraphQL's Item every field of REST's item
// (resource.Item, generated from ent/schema): selection, twins_test.go.
var itemFields = selection(reflect.TypeFor[resource.Item]())

// restAsGraphQL is a REST resource as GraphQL's type typeName names and
// spells it (asGraphQL, twins_test.go).
func restAsGraphQL(t *testing.T, typeName string, rest map[string]any) map[string]any {
	t.Helper()
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	return asGraphQL(t, schema, ast.NamedType(typeName, nil), rest).(map[string]any)
}

// restItem fetches an item through REST as GraphQL names and spells it.
func restItem(t *testing.T, env *testutil.Env, as testutil.Actor, id string) map[string]any {
	t.Helper()
	res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: as.Token})
	var it map[string]any
	res.Data(t, &it)
	return restAsGraphQL(t, "Item", it)
}

func gqlItem(t *testing.T, env *testutil.Env, as testutil.Actor, id string) map[string]any {
	t.Helper()
	r := testutil.GQL(t, env, as.Token, `query($id: ID!) { item(id: $id) { `+itemFields+` } }`, map[string]any{"id": id}).OK(t)
	return r.At(t, "item").(map[string]any)
}

func sameItem(t *testing.T, rest, graph map[string]any) {
	t.Helper()
	for k, v := range rest {
		if graph[k] != v {
			t.Errorf("%s: REST %v, GraphQL %v", k, v, graph[k])
		}
	}
}

// TestParityData writes through one transport and reads through the other,
// both ways: the same item, field for field (timestamps included).
func TestParityData(t *testing.T) {
	env := testutil.New(t)

	t.Run("create GraphQL, read REST and GraphQL", func(t *testing.T) {
		r := testutil.GQL(t, env, env.Alice.Token, `mutation($in: CreateItemInput!) { createItem(input: $in) { `+itemFields+` } }`,
			map[string]any{"in": map[string]any{"name": "  Lamp ", "description": "desk", "status": "ARCHIVED"}}).OK(t)
		created := r.At(t, "createItem").(map[string]any)
		if created["name"] != "Lamp" || created["userID"] != env.Alice.UserID || created["status"] != "ARCHIVED" {
			t.Fatalf("created %v", created)
		}
		viaREST := restItem(t, env, env.Alice, created["id"].(string))
		sameItem(t, viaREST, created)
		sameItem(t, viaREST, gqlItem(t, env, env.Alice, created["id"].(string)))
	})

	t.Run("create REST, read GraphQL item and node", func(t *testing.T) {
		id := env.CreateItem(env.Alice, "Chair")
		viaREST := restItem(t, env, env.Alice, id)
		sameItem(t, viaREST, gqlItem(t, env, env.Alice, id))
		r := testutil.GQL(t, env, env.Alice.Token, `query($id: ID!) { node(id: $id) { ... on Item { `+itemFields+` } } }`, map[string]any{"id": id}).OK(t)
		sameItem(t, viaREST, r.At(t, "node").(map[string]any))
	})

	t.Run("update GraphQL, read REST", func(t *testing.T) {
		id := env.CreateItem(env.Alice, "Desk")
		r := testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {description: "oak"}) { `+itemFields+` } }`,
			map[string]any{"id": id}).OK(t)
		updated := r.At(t, "updateItem").(map[string]any)
		if updated["description"] != "oak" || updated["name"] != "Desk" {
			t.Fatalf("updated %v", updated)
		}
		sameItem(t, restItem(t, env, env.Alice, id), updated)
	})

	t.Run("update REST, read GraphQL", func(t *testing.T) {
		id := env.CreateItem(env.Alice, "Shelf")
		res := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token, Body: map[string]any{"name": "Tall shelf"}})
		if res.Status != http.StatusOK {
			t.Fatalf("PUT: %d %s", res.Status, res.Body)
		}
		viaGraph := gqlItem(t, env, env.Alice, id)
		if viaGraph["name"] != "Tall shelf" {
			t.Fatalf("name %v", viaGraph["name"])
		}
		sameItem(t, restItem(t, env, env.Alice, id), viaGraph)
	})

	t.Run("delete GraphQL, gone on REST", func(t *testing.T) {
		id := env.CreateItem(env.Alice, "Bin")
		r := testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { deleteItem(id: $id) }`, map[string]any{"id": id}).OK(t)
		if r.At(t, "deleteItem") != id {
			t.Fatalf("deleteItem returned %v", r.At(t, "deleteItem"))
		}
		if res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}); res.ErrorCode() != "NOT_FOUND" {
			t.Fatalf("REST after delete: %d %s", res.Status, res.Body)
		}
	})

	t.Run("delete REST, gone on GraphQL", func(t *testing.T) {
		id := env.CreateItem(env.Alice, "Box")
		if res := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token}); res.Status != http.StatusOK {
			t.Fatalf("DELETE: %d %s", res.Status, res.Body)
		}
		r := testutil.GQL(t, env, env.Alice.Token, `query($id: ID!) { item(id: $id) { id } }`, map[string]any{"id": id})
		if r.Code() != "NOT_FOUND" {
			t.Fatalf("GraphQL after delete: %s", r.Raw)
		}
	})

	t.Run("me and login", func(t *testing.T) {
		res := env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token})
		var me map[string]any
		res.Data(t, &me)
		r := testutil.GQL(t, env, env.Alice.Token, `{ me { `+selection(reflect.TypeFor[resource.User]())+` } }`, nil).OK(t)
		sameItem(t, restAsGraphQL(t, "User", me), r.At(t, "me").(map[string]any))
		r = testutil.GQL(t, env, "", `mutation($k: String!) { login(apiKey: $k) { accessToken tokenType expiresIn } }`, map[string]any{"k": env.Alice.Key}).OK(t)
		if r.At(t, "login", "tokenType") != "Bearer" || r.At(t, "login", "expiresIn") != float64(3600) {
			t.Fatalf("login: %s", r.Raw)
		}
		tok := r.At(t, "login", "accessToken").(string)
		if res := env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: tok}); res.Status != http.StatusOK {
			t.Fatalf("a GraphQL token on REST: %d %s", res.Status, res.Body)
		}
	})
}

// TestParityErrors sends the same bad operation through both transports:
// the same code (and field for validation, REST's name in GraphQL's
// spelling, graph.FieldName: api_key is apiKey) comes back. Failures of the
// resolvers answer 200 with errors; failures of the token check keep REST's
// HTTP status.
func TestParityErrors(t *testing.T) {
	const secret = "parity-test-secret-0123456789abcdef"
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.JWTSecret = secret }))
	bobs := env.CreateItem(env.Bob, "Bob's")
	missing := "item_01m80rv1h8d119v06vwk93e0ze"
	expired, err := auth.NewTokens([]byte(secret), -time.Minute).Issue(env.Alice.UserID, env.Alice.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 201)

	cases := []struct {
		name       string
		rest       testutil.Request
		token      string
		query      string
		vars       map[string]any
		code       string
		field      string
		gqlStatus  int
		restStatus int
	}{
		{"validation: missing name",
			testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"description": "d"}},
			env.Alice.Token, `mutation { createItem(input: {description: "d"}) { id } }`, nil,
			"VALIDATION_ERROR", "name", 200, 400},
		{"validation: name too long",
			testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": long}},
			env.Alice.Token, `mutation($n: String!) { createItem(input: {name: $n}) { id } }`, map[string]any{"n": long},
			"VALIDATION_ERROR", "name", 200, 400},
		// status is the ItemStatus enum: GraphQL refuses a bad value before
		// the operation runs (a request error: 200 to a client that accepts
		// application/json, as the GraphQL-over-HTTP specification asks),
		// still naming the field with REST's reason.
		{"validation: bad status on update",
			testutil.Request{Method: "PUT", Path: "/v1/items/" + bobs, Token: env.Bob.Token, Body: map[string]any{"status": "gone"}},
			env.Bob.Token, `mutation($id: ID!) { updateItem(id: $id, input: {status: gone}) { id } }`, map[string]any{"id": bobs},
			"VALIDATION_ERROR", "status", 200, 400},
		{"validation: bad status as a string literal",
			testutil.Request{Method: "PUT", Path: "/v1/items/" + bobs, Token: env.Bob.Token, Body: map[string]any{"status": "gone"}},
			env.Bob.Token, `mutation($id: ID!) { updateItem(id: $id, input: {status: "gone"}) { id } }`, map[string]any{"id": bobs},
			"VALIDATION_ERROR", "status", 200, 400},
		{"validation: bad status in an input variable",
			testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Bob.Token, Body: map[string]any{"name": "n", "status": "gone"}},
			env.Bob.Token, `mutation($in: CreateItemInput!) { createItem(input: $in) { id } }`, map[string]any{"in": map[string]any{"name": "n", "status": "gone"}},
			"VALIDATION_ERROR", "status", 200, 400},
		{"validation: bad status in a variable of its own",
			testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Bob.Token, Body: map[string]any{"name": "n", "status": "gone"}},
			env.Bob.Token, `mutation($s: ItemStatus) { createItem(input: {name: "n", status: $s}) { id } }`, map[string]any{"s": "gone"},
			"VALIDATION_ERROR", "status", 200, 400},
		{"validation: empty api key",
			testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": ""}},
			"", `mutation { login(apiKey: "") { accessToken } }`, nil,
			"VALIDATION_ERROR", "api_key", 200, 400},
		{"not found: get",
			testutil.Request{Method: "GET", Path: "/v1/items/" + missing, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { item(id: $id) { id } }`, map[string]any{"id": missing},
			"NOT_FOUND", "", 200, 404},
		{"not found: update",
			testutil.Request{Method: "PUT", Path: "/v1/items/" + missing, Token: env.Alice.Token, Body: map[string]any{"name": "n"}},
			env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {name: "n"}) { id } }`, map[string]any{"id": missing},
			"NOT_FOUND", "", 200, 404},
		{"not found: delete",
			testutil.Request{Method: "DELETE", Path: "/v1/items/" + missing, Token: env.Alice.Token},
			env.Alice.Token, `mutation($id: ID!) { deleteItem(id: $id) }`, map[string]any{"id": missing},
			"NOT_FOUND", "", 200, 404},
		{"permission denied: get another's item",
			testutil.Request{Method: "GET", Path: "/v1/items/" + bobs, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { item(id: $id) { id } }`, map[string]any{"id": bobs},
			"PERMISSION_DENIED", "", 200, 403},
		{"permission denied: node of another's item",
			testutil.Request{Method: "GET", Path: "/v1/items/" + bobs, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": bobs},
			"PERMISSION_DENIED", "", 200, 403},
		{"permission denied: nodes with another's item",
			testutil.Request{Method: "GET", Path: "/v1/items/" + bobs, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { nodes(ids: [$id, $id]) { id } }`, map[string]any{"id": bobs},
			"PERMISSION_DENIED", "", 200, 403},
		{"not found: node",
			testutil.Request{Method: "GET", Path: "/v1/items/" + missing, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": missing},
			"NOT_FOUND", "", 200, 404},
		{"not found: nodes",
			testutil.Request{Method: "GET", Path: "/v1/items/" + missing, Token: env.Alice.Token},
			env.Alice.Token, `query($id: ID!) { nodes(ids: [$id, $id]) { id } }`, map[string]any{"id": missing},
			"NOT_FOUND", "", 200, 404},
		{"permission denied: update another's item",
			testutil.Request{Method: "PUT", Path: "/v1/items/" + bobs, Token: env.Alice.Token, Body: map[string]any{"name": "mine"}},
			env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {name: "mine"}) { id } }`, map[string]any{"id": bobs},
			"PERMISSION_DENIED", "", 200, 403},
		{"permission denied: delete another's item",
			testutil.Request{Method: "DELETE", Path: "/v1/items/" + bobs, Token: env.Alice.Token},
			env.Alice.Token, `mutation($id: ID!) { deleteItem(id: $id) }`, map[string]any{"id": bobs},
			"PERMISSION_DENIED", "", 200, 403},
		{"unauthorized: no token",
			testutil.Request{Method: "GET", Path: "/v1/users/me"},
			"", `{ me { id } }`, nil,
			"UNAUTHORIZED", "", 401, 401},
		{"unauthorized: forged token",
			testutil.Request{Method: "GET", Path: "/v1/users/me", Token: "not.a.token"},
			"not.a.token", `{ me { id } }`, nil,
			"UNAUTHORIZED", "", 401, 401},
		{"token expired",
			testutil.Request{Method: "GET", Path: "/v1/users/me", Token: expired},
			expired, `{ me { id } }`, nil,
			"TOKEN_EXPIRED", "", 401, 401},
		{"invalid api key",
			testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": "sk_live_" + strings.Repeat("a", 40)}},
			"", `mutation { login(apiKey: "sk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") { accessToken } }`, nil,
			"INVALID_API_KEY", "", 200, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := env.Do(c.rest)
			if res.Status != c.restStatus || res.ErrorCode() != c.code {
				t.Fatalf("REST: %d %s, want %d %s", res.Status, res.Body, c.restStatus, c.code)
			}
			r := testutil.GQL(t, env, c.token, c.query, c.vars)
			if r.Status != c.gqlStatus || r.Code() != c.code {
				t.Fatalf("GraphQL: %d %s, want %d %s", r.Status, r.Raw, c.gqlStatus, c.code)
			}
			if r.Errors[0].Message == "" {
				t.Errorf("GraphQL error without a message: %s", r.Raw)
			}
			if c.field != "" {
				var restErr struct {
					Error struct {
						Details map[string]any `json:"details"`
					} `json:"error"`
				}
				testutil.MustJSON(t, res.Body, &restErr)
				if restErr.Error.Details["field"] != c.field || r.Errors[0].Extensions["field"] != graph.FieldName(c.field) {
					t.Errorf("field: REST %v, GraphQL %v, want %s and %s", restErr.Error.Details["field"], r.Errors[0].Extensions["field"], c.field, graph.FieldName(c.field))
				}
				// The same reason, an enum's values spelled as each
				// transport spells them (active, ACTIVE).
				if reason, _ := r.Errors[0].Extensions["reason"].(string); !strings.EqualFold(reason, fmt.Sprint(restErr.Error.Details["reason"])) {
					t.Errorf("reason: REST %v, GraphQL %v", restErr.Error.Details["reason"], r.Errors[0].Extensions["reason"])
				}
			}
		})
	}
}

// TestParityDefaultOrder: with no orderBy, items come newest first, as REST
// lists them with no sort, for a user and for an admin.
func TestParityDefaultOrder(t *testing.T) {
	env := testutil.New(t)
	for i := range 4 {
		env.CreateItem(env.Alice, strings.Repeat("z", 4-i)) // names sort opposite to creation
	}
	env.CreateItem(env.Bob, "bob's")
	for _, as := range []testutil.Actor{env.Alice, env.Admin} {
		res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?limit=3", Token: as.Token})
		var rest []struct{ ID string }
		res.Data(t, &rest)
		want := make([]string, len(rest))
		for i, it := range rest {
			want[i] = it.ID
		}
		got := testutil.GQL(t, env, as.Token, `{ items(first: 3) { edges { node { id } } } }`, nil).OK(t).IDs(t, "items")
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("GraphQL default order %v, REST %v", got, want)
		}
	}
}
