package rest_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestEmailsNormalised: an address is one user however it is spelled:
// fullwidth letters, a decomposed accent, another case are the address
// already taken; an invisible character is refused naming email. The
// operator's paths (CreateKey, FindKeys: the CLI and first start) and the
// users' email filter read addresses the same way.
func TestEmailsNormalised(t *testing.T) {
	env := testutil.New(t)
	admin := env.Admin.Token
	taken := []string{`"field":"email"`, `"reason":"is already taken"`}
	invisible := []string{`"field":"email"`, `must not contain invisible characters`}
	create := func(email string) map[string]any { return map[string]any{"email": email, "name": "N"} }

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "a composed accent", Method: "POST", Path: "/v1/users", Token: admin, Body: create("jos\u00e9@example.com"), Status: 201,
			Contains: []string{"\"email\":\"jos\u00e9@example.com\""}},
		{Name: "the same accent decomposed", Method: "POST", Path: "/v1/users", Token: admin, Body: create("jose\u0301@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: taken},
		{Name: "fullwidth letters", Method: "POST", Path: "/v1/users", Token: admin, Body: create("\uff41\uff4c\uff49\uff43\uff45@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: taken},
		{Name: "fullwidth capitals", Method: "POST", Path: "/v1/users", Token: admin, Body: create("\uff21LICE@\uff25XAMPLE.COM"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: taken},
		{Name: "a zero-width space", Method: "POST", Path: "/v1/users", Token: admin, Body: create("alice\u200b@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: invisible},
		{Name: "a zero-width joiner", Method: "POST", Path: "/v1/users", Token: admin, Body: create("ali\u200dce@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: invisible},
		{Name: "a soft hyphen", Method: "POST", Path: "/v1/users", Token: admin, Body: create("al\u00adice@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: invisible},
		{Name: "a byte order mark", Method: "POST", Path: "/v1/users", Token: admin, Body: create("\ufeffnew@example.com"),
			Status: 400, Code: "VALIDATION_ERROR", Contains: invisible},
		{Name: "the filter folds fullwidth letters", Method: "GET", Path: "/v1/users?email=" + url.QueryEscape("\uff21LI"), Token: admin, Status: 200,
			Contains: []string{`"email":"alice@example.com"`, `"total":1`}},
		{Name: "the filter folds a decomposed accent", Method: "GET", Path: "/v1/users?email=" + url.QueryEscape("jose\u0301"), Token: admin, Status: 200,
			Contains: []string{"\"email\":\"jos\u00e9@example.com\"", `"total":1`}},
		{Name: "the filter refuses an invisible character", Method: "GET", Path: "/v1/users?email=" + url.QueryEscape("ali\u200bce"), Token: admin,
			Status: 400, Code: "VALIDATION_ERROR", Contains: invisible},
	})

	// The CLI's paths: a key for the fullwidth spelling is Alice's, and her
	// keys are found by it.
	ctx := context.Background()
	k, err := env.App.Service.CreateKey(ctx, "\uff41lice@example.com", "", false)
	if err != nil || k.UserID != env.Alice.UserID {
		t.Fatalf("CreateKey for a fullwidth spelling: user %q, %v; want Alice's %s", k.UserID, err, env.Alice.UserID)
	}
	if _, err := env.App.Service.CreateKey(ctx, "alice\u200b@example.com", "Alice", false); err == nil {
		t.Fatal("CreateKey took an address with a zero-width space")
	}
	keys, err := env.App.Service.FindKeys(service.System(ctx), "ALICE@\uff45xample.com")
	if err != nil || len(keys) != 2 {
		t.Fatalf("FindKeys by a fullwidth spelling: %d keys, %v; want Alice's 2", len(keys), err)
	}
}

// TestEmailsNormalisedOnGraphQL: GraphQL's users filter reads an address
// as REST's does.
func TestEmailsNormalisedOnGraphQL(t *testing.T) {
	env := testutil.New(t)
	const q = `query($w: UserWhereInput) { users(where: $w) { totalCount edges { node { email } } } }`
	for _, c := range []struct {
		name  string
		where map[string]any
		code  string
		total float64
	}{
		{"fullwidth prefix", map[string]any{"emailHasPrefix": "\uff21LI"}, "", 1},
		{"an email in another case, nested", map[string]any{"or": []any{map[string]any{"email": "ALICE@EXAMPLE.COM"}}}, "", 1},
		{"an invisible character", map[string]any{"emailHasPrefix": "ali\u200b"}, "VALIDATION_ERROR", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := testutil.GQL(t, env, env.Admin.Token, q, map[string]any{"w": c.where})
			if c.code != "" {
				if res.Code() != c.code {
					t.Fatalf("code %q, want %s", res.Code(), c.code)
				}
				return
			}
			if n := res.OK(t).At(t, "users", "totalCount"); n != c.total {
				t.Fatalf("totalCount %v, want %v", n, c.total)
			}
		})
	}
}
