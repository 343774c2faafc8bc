package rest_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestListUsers: GET /v1/users lists every user, oldest first, to admins,
// paged like the other lists; anyone else is refused.
func TestListUsers(t *testing.T) {
	env := testutil.New(t) // an admin, then Alice, then Bob
	admin, alice, bob := env.Admin, env.Alice, env.Bob
	ids := func(t *testing.T, r *testutil.Response) []string {
		t.Helper()
		var users []struct{ ID, Email, Role string }
		r.Data(t, &users)
		out := make([]string, len(users))
		for i, u := range users {
			out[i] = u.ID
		}
		return out
	}
	want := func(want ...string) func(*testing.T, *testutil.Response) {
		return func(t *testing.T, r *testutil.Response) {
			t.Helper()
			got := ids(t, r)
			if len(got) != len(want) {
				t.Fatalf("users %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("users %v, want %v", got, want)
				}
			}
		}
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "admin lists everyone, oldest first", Method: "GET", Path: "/v1/users", Token: admin.Token, Status: 200,
			Contains: []string{`"pagination":{"page":1,"limit":20,"total":3,"pages":1}`, `"role":"admin"`, `"email":"alice@example.com"`},
			Check:    want(admin.UserID, alice.UserID, bob.UserID)},
		{Name: "a page of two", Method: "GET", Path: "/v1/users?limit=2", Token: admin.Token, Status: 200,
			Contains: []string{`"pagination":{"page":1,"limit":2,"total":3,"pages":2}`}, Check: want(admin.UserID, alice.UserID)},
		{Name: "the second page", Method: "GET", Path: "/v1/users?limit=2&page=2", Token: admin.Token, Status: 200,
			Contains: []string{`"pagination":{"page":2,"limit":2,"total":3,"pages":2}`}, Check: want(bob.UserID)},
		{Name: "past the last page", Method: "GET", Path: "/v1/users?page=9", Token: admin.Token, Status: 200,
			Contains: []string{`"data":[]`, `"total":3`}},
		{Name: "limit over 100", Method: "GET", Path: "/v1/users?limit=101", Token: admin.Token, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"limit"`}},
		{Name: "page 0", Method: "GET", Path: "/v1/users?page=0", Token: admin.Token, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"page"`}},
		{Name: "admins only", Method: "GET", Path: "/v1/users?role=admin", Token: admin.Token, Status: 200,
			Contains: []string{`"total":1`}, Check: want(admin.UserID)},
		{Name: "users only", Method: "GET", Path: "/v1/users?role=user", Token: admin.Token, Status: 200,
			Contains: []string{`"total":2`}, Check: want(alice.UserID, bob.UserID)},
		{Name: "by email prefix, any case", Method: "GET", Path: "/v1/users?email=ALI", Token: admin.Token, Status: 200,
			Contains: []string{`"total":1`}, Check: want(alice.UserID)},
		{Name: "enabled users", Method: "GET", Path: "/v1/users?disabled=false", Token: admin.Token, Status: 200,
			Contains: []string{`"total":3`}},
		{Name: "no disabled user yet", Method: "GET", Path: "/v1/users?disabled=true", Token: admin.Token, Status: 200,
			Contains: []string{`"data":[]`, `"total":0`}},
		{Name: "filters combine", Method: "GET", Path: "/v1/users?role=user&disabled=false&email=b", Token: admin.Token, Status: 200,
			Check: want(bob.UserID)},
		{Name: "an unknown role", Method: "GET", Path: "/v1/users?role=boss", Token: admin.Token, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"role"`, `"reason":"must be one of: user, admin"`}},
		{Name: "disabled not a boolean", Method: "GET", Path: "/v1/users?disabled=yes", Token: admin.Token, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"disabled"`}},
		{Name: "an email prefix with NUL", Method: "GET", Path: "/v1/users?email=a%00", Token: admin.Token, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"email"`}},
		{Name: "a user is refused", Method: "GET", Path: "/v1/users", Token: alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a user filtering is refused", Method: "GET", Path: "/v1/users?role=admin", Token: alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "no token", Method: "GET", Path: "/v1/users", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "DELETE is not a method of the list", Method: "DELETE", Path: "/v1/users", Token: admin.Token, Status: 405, Code: "METHOD_NOT_ALLOWED"},
	})
}
