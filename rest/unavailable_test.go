package rest_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestDatabaseUnavailable: with the database gone, requests that need it
// answer 503 UNAVAILABLE, not 500.
func TestDatabaseUnavailable(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "x")
	if err := env.App.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "list", Method: "GET", Path: "/v1/items", Token: env.Alice.Token, Status: 503, Code: "UNAVAILABLE"},
		{Name: "get", Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token, Status: 503, Code: "UNAVAILABLE"},
		{Name: "create", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: `{"name":"y"}`, Status: 503, Code: "UNAVAILABLE"},
		{Name: "login", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Bob.Key}, Status: 503, Code: "UNAVAILABLE"},
	})
}
