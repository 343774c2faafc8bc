package rest_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// TestContractSweep sends one request for each operation and each status the
// OpenAPI document promises for it. The assertions of each row are the
// contract of DESIGN §3; testutil checks every response against the
// document besides, so the document is proven for each row too.
func TestContractSweep(t *testing.T) {
	env := testutil.New(t)
	alice, bob, admin := env.Alice.Token, env.Bob.Token, env.Admin.Token
	mine := env.CreateItem(env.Alice, "mine")
	gone := env.CreateItem(env.Alice, "to delete")
	bobs := env.CreateItem(env.Bob, "bob's")
	missing := "item_01kaaaaaaaaaaaaaaaaaaaaaaa"
	big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	text := map[string]string{"Content-Type": "text/plain"}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "login ok", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Alice.Key}, Status: 200, Contains: []string{`"token_type":"Bearer"`, `"expires_in":3600`}},
		{Name: "login without key", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "login unknown field", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": "x", "user": "y"}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "login wrong key", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": "sk_live_" + strings.Repeat("a", 32)}, Status: 401, Code: "INVALID_API_KEY"},
		{Name: "login not JSON", Method: "POST", Path: "/v1/auth/login", Body: "api_key=x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "login too big", Method: "POST", Path: "/v1/auth/login", Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		{Name: "me", Method: "GET", Path: "/v1/users/me", Token: alice, Status: 200, Contains: []string{`"email":"alice@example.com"`}},
		{Name: "me without token", Method: "GET", Path: "/v1/users/me", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "me with forged token", Method: "GET", Path: "/v1/users/me", Token: "eyJ.forged.token", Status: 401, Code: "UNAUTHORIZED"},

		{Name: "list", Method: "GET", Path: "/v1/items", Token: alice, Status: 200, Contains: []string{`"pagination":{"page":1,"limit":20,"total":2,"pages":1,"next_cursor":null}`}},
		{Name: "list with every parameter", Method: "GET", Path: "/v1/items?page=1&limit=1&status=active&sort=name&order=asc&user_id=" + env.Alice.UserID, Token: alice, Status: 200},
		{Name: "list past the end", Method: "GET", Path: "/v1/items?page=9", Token: alice, Status: 200, Contains: []string{`"data":[]`}},
		{Name: "admin lists all", Method: "GET", Path: "/v1/items", Token: admin, Status: 200, Contains: []string{`"total":3`}},
		{Name: "list bad limit", Method: "GET", Path: "/v1/items?limit=500", Token: alice, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"limit"`}},
		{Name: "list bad sort", Method: "GET", Path: "/v1/items?sort=owner", Token: alice, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "list another user's", Method: "GET", Path: "/v1/items?user_id=" + env.Bob.UserID, Token: alice, Status: 403, Code: "PERMISSION_DENIED"},

		{Name: "create", Method: "POST", Path: "/v1/items", Token: alice, Body: map[string]any{"name": "new", "description": "d", "status": "archived"}, Status: 201,
			Check: func(t *testing.T, r *testutil.Response) {
				if !strings.HasPrefix(r.Header.Get("Location"), "/v1/items/item_") {
					t.Errorf("Location = %q", r.Header.Get("Location"))
				}
			}},
		{Name: "create without name", Method: "POST", Path: "/v1/items", Token: alice, Body: map[string]any{"description": "d"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "create malformed JSON", Method: "POST", Path: "/v1/items", Token: alice, Body: `{"name":`, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "create wrong type", Method: "POST", Path: "/v1/items", Token: alice, Body: map[string]any{"name": 5}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "create not JSON", Method: "POST", Path: "/v1/items", Token: alice, Body: "name=x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "create too big", Method: "POST", Path: "/v1/items", Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},
		{Name: "create without token", Method: "POST", Path: "/v1/items", Body: map[string]any{"name": "x"}, Status: 401, Code: "UNAUTHORIZED"},

		{Name: "get", Method: "GET", Path: "/v1/items/" + mine, Token: alice, Status: 200},
		{Name: "get another user's", Method: "GET", Path: "/v1/items/" + bobs, Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "get unknown", Method: "GET", Path: "/v1/items/" + missing, Token: alice, Status: 404, Code: "NOT_FOUND"},
		{Name: "get malformed id", Method: "GET", Path: "/v1/items/nope", Token: alice, Status: 404, Code: "NOT_FOUND"},

		{Name: "update", Method: "PUT", Path: "/v1/items/" + mine, Token: alice, Body: map[string]any{"status": "archived", "id": mine, "user_id": env.Alice.UserID}, Status: 200, Contains: []string{`"status":"archived"`}},
		{Name: "update unknown field", Method: "PUT", Path: "/v1/items/" + mine, Token: alice, Body: map[string]any{"owner": "x"}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "update bad status", Method: "PUT", Path: "/v1/items/" + mine, Token: alice, Body: map[string]any{"status": "done"}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "update another user's", Method: "PUT", Path: "/v1/items/" + bobs, Token: alice, Body: map[string]any{"name": "x"}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "update unknown", Method: "PUT", Path: "/v1/items/" + missing, Token: alice, Body: map[string]any{"name": "x"}, Status: 404, Code: "NOT_FOUND"},
		{Name: "update not JSON", Method: "PUT", Path: "/v1/items/" + mine, Token: alice, Body: "x", Headers: text, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "update too big", Method: "PUT", Path: "/v1/items/" + mine, Token: alice, Body: big, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		{Name: "delete", Method: "DELETE", Path: "/v1/items/" + gone, Token: alice, Status: 200, Contains: []string{`"deleted":true`}},
		{Name: "delete again", Method: "DELETE", Path: "/v1/items/" + gone, Token: alice, Status: 404, Code: "NOT_FOUND"},
		{Name: "delete another user's", Method: "DELETE", Path: "/v1/items/" + bobs, Token: bob + "x", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "delete another user's as them", Method: "DELETE", Path: "/v1/items/" + mine, Token: bob, Status: 403, Code: "PERMISSION_DENIED"},

		{Name: "wrong method", Method: "PATCH", Path: "/v1/items/" + mine, Token: alice, Body: map[string]any{}, Status: 405, Code: "METHOD_NOT_ALLOWED"},
		{Name: "unknown route", Method: "GET", Path: "/v1/things", Token: alice, Status: 404, Code: "NOT_FOUND"},
	})
}

// TestOpenAPICoversEveryRoute compares the routes the router serves under
// /v1 with the operations of the OpenAPI document, both ways: the contract
// check fails only the exchanges a test makes, and a route no test reaches
// must not go undocumented either.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	env := testutil.New(t)
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(rest.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/v1" {
		t.Fatalf("servers = %+v, want the one /v1", doc.Servers)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" && method != "summary" && method != "description" {
				documented[strings.ToUpper(method)+" /v1"+path] = true
			}
		}
	}
	served := map[string]bool{}
	param := regexp.MustCompile(`:([a-z_]+)`)
	engine, ok := env.App.Handler.(*gin.Engine)
	if !ok {
		t.Fatalf("the app's handler is a %T, not the gin engine whose routes this test reads", env.App.Handler)
	}
	for _, r := range engine.Routes() {
		if strings.HasPrefix(r.Path, "/v1/") {
			served[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
		}
	}
	for route := range served {
		if !documented[route] {
			t.Errorf("%s is served but not in rest/openapi/openapi.json", route)
		}
	}
	for route := range documented {
		if !served[route] {
			t.Errorf("%s is in rest/openapi/openapi.json but not served", route)
		}
	}
	if len(served) == 0 {
		t.Error("no routes under /v1: the comparison proves nothing")
	}
}
