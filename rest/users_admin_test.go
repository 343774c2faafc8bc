package rest_test

import (
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestUserAdministration: GET, POST and PUT of /v1/users, a row per case
// of the contract (DESIGN §8) for each kind of caller: the admin, the user
// themselves, another user, a read-only key, an expired key and a disabled
// user. Rows run in order on one database.
func TestUserAdministration(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = 100 * time.Millisecond }))
	admin, alice, bob := env.Admin, env.Alice, env.Bob
	ro := env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
	expired := env.NewKeyActor("carol@example.com", "Carol", false, nil)
	if err := env.App.DB.Client.APIKey.UpdateOneID(expired.KeyID).SetExpiresAt(time.Now().Add(-time.Second)).
		Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	gone := env.NewKeyActor("dave@example.com", "Dave", false, nil)
	if err := env.App.DB.Client.User.UpdateOneID(gone.UserID).SetDisabled(true).Exec(testutil.SystemContext(t)); err != nil {
		t.Fatal(err)
	}
	// The key recheck lets both go within its interval.
	testutil.Eventually(t, 5*time.Second, func() bool {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: gone.Token}).Status == 401 &&
			env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: expired.Token}).Status == 401
	})
	var created string
	users := env.App.DB.Client.User
	name := func(id string) string {
		u, err := users.Get(testutil.SystemContext(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return u.Name
	}

	testutil.Run(t, env, []testutil.Scenario{
		// GET /v1/users/{id}
		{Name: "admin reads a user", Method: "GET", Path: "/v1/users/" + alice.UserID, Token: admin.Token, Status: 200,
			Contains: []string{`"email":"alice@example.com"`, `"role":"user"`, `"disabled":false`}},
		{Name: "a user reads themselves", Method: "GET", Path: "/v1/users/" + alice.UserID, Token: alice.Token, Status: 200},
		{Name: "a read-only key reads its user", Method: "GET", Path: "/v1/users/" + alice.UserID, Token: ro.Token, Status: 200},
		{Name: "another user is not found", Method: "GET", Path: "/v1/users/" + alice.UserID, Token: bob.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "an unknown id", Method: "GET", Path: "/v1/users/user_nope", Token: admin.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "an expired key", Method: "GET", Path: "/v1/users/" + expired.UserID, Token: expired.Token, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "a disabled user", Method: "GET", Path: "/v1/users/" + gone.UserID, Token: gone.Token, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "admin reads a disabled user", Method: "GET", Path: "/v1/users/" + gone.UserID, Token: admin.Token, Status: 200,
			Contains: []string{`"disabled":true`}},

		// POST /v1/users
		{Name: "admin creates a user", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "Frank@Example.com", "name": "Frank"}, Status: 201,
			Contains: []string{`"email":"frank@example.com"`, `"role":"user"`, `"disabled":false`},
			Check: func(t *testing.T, r *testutil.Response) {
				var u struct{ ID string }
				r.Data(t, &u)
				created = u.ID
				if loc := r.Header.Get("Location"); loc != "/v1/users/"+u.ID {
					t.Fatalf("Location %q", loc)
				}
			}},
		{Name: "admin creates an admin", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "grace@example.com", "name": "Grace", "role": "admin"}, Status: 201, Contains: []string{`"role":"admin"`}},
		{Name: "an email taken in another case", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "ALICE@example.com", "name": "A"}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"email"`, `"reason":"is already taken"`}},
		{Name: "an unknown role", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "h@example.com", "name": "H", "role": "root"}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"role"`}},
		{Name: "no email", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"name": "H"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"email"`}},
		{Name: "not an email", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "nope", "name": "H"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"email"`}},
		{Name: "an unknown field", Method: "POST", Path: "/v1/users", Token: admin.Token,
			Body: map[string]any{"email": "h@example.com", "name": "H", "disabled": true}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"disabled"`}},
		{Name: "a user may not create users", Method: "POST", Path: "/v1/users", Token: alice.Token,
			Body: map[string]any{"email": "h@example.com", "name": "H"}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a read-only key may not", Method: "POST", Path: "/v1/users", Token: ro.Token,
			Body: map[string]any{"email": "h@example.com", "name": "H"}, Status: 403, Code: "PERMISSION_DENIED",
			Contains: []string{`"reason":"read-only key"`}},
		{Name: "a disabled user may not", Method: "POST", Path: "/v1/users", Token: gone.Token,
			Body: map[string]any{"email": "h@example.com", "name": "H"}, Status: 401, Code: "UNAUTHORIZED"},
		{Name: "nobody named h was made", Method: "GET", Path: "/v1/users?email=h", Token: admin.Token, Status: 200,
			Contains: []string{`"total":0`}},

		// PUT /v1/users/{id}
		{Name: "a user renames themselves", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token,
			Body: map[string]any{"name": "Alice A.", "email": "alice@example.com", "id": alice.UserID, "updated_at": "2000-01-01T00:00:00Z"}, Status: 200,
			Contains: []string{`"name":"Alice A."`, `"email":"alice@example.com"`}},
		{Name: "an email cannot change", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"name": "Alice B.", "email": "other@example.com"}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"email"`, `"reason":"is read-only`},
			Check: func(t *testing.T, _ *testutil.Response) {
				if n := name(alice.UserID); n != "Alice A." {
					t.Fatalf("name %q after a refused PUT", n)
				}
			}},
		{Name: "a user may not change their role", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token,
			Body: map[string]any{"role": "admin"}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a user may not disable themselves", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: alice.Token,
			Body: map[string]any{"disabled": true}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "another user is not found", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: bob.Token,
			Body: map[string]any{"name": "Mallory"}, Status: 404, Code: "NOT_FOUND",
			Check: func(t *testing.T, _ *testutil.Response) {
				if n := name(alice.UserID); n != "Alice A." {
					t.Fatalf("name %q after another user's PUT", n)
				}
			}},
		{Name: "a read-only key may not rename", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: ro.Token,
			Body: map[string]any{"name": "RO"}, Status: 403, Code: "PERMISSION_DENIED", Contains: []string{`"reason":"read-only key"`}},
		{Name: "an expired key may not", Method: "PUT", Path: "/v1/users/" + expired.UserID, Token: expired.Token,
			Body: map[string]any{"name": "X"}, Status: 401, Code: "TOKEN_EXPIRED"},
		{Name: "an empty name", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"name": "  "}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "a null name", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"name": nil}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "an unknown role", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"role": "owner"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"role"`}},
		{Name: "an unknown field", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"password": "x"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"password"`}},
		{Name: "admin disables a user", Method: "PUT", Path: "/v1/users/" + bob.UserID, Token: admin.Token,
			Body: map[string]any{"disabled": true}, Status: 200, Contains: []string{`"disabled":true`}},
		{Name: "the disabled user's token stops at once on this replica", Method: "GET", Path: "/v1/users/me", Token: bob.Token,
			Status: 401, Code: "UNAUTHORIZED"},
		{Name: "the disabled user's key logs in no more", Method: "POST", Path: "/v1/auth/login",
			Body: map[string]any{"api_key": bob.Key}, Status: 401, Code: "INVALID_API_KEY"},
		{Name: "admin enables the user again", Method: "PUT", Path: "/v1/users/" + bob.UserID, Token: admin.Token,
			Body: map[string]any{"disabled": false}, Status: 200, Contains: []string{`"disabled":false`}},
		{Name: "the user's key logs in again", Method: "POST", Path: "/v1/auth/login",
			Body: map[string]any{"api_key": bob.Key}, Status: 200},
		{Name: "admin promotes a user", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"role": "admin"}, Status: 200, Contains: []string{`"role":"admin"`}},
		{Name: "admin demotes them again", Method: "PUT", Path: "/v1/users/" + alice.UserID, Token: admin.Token,
			Body: map[string]any{"role": "user"}, Status: 200, Contains: []string{`"role":"user"`}},
	})

	// The last enabled admin: demote the other admin (grace), then the
	// admin cannot demote or disable themselves.
	res := env.Do(testutil.Request{Method: "GET", Path: "/v1/users?role=admin&email=grace", Token: admin.Token})
	var grace []struct{ ID string }
	res.Data(t, &grace)
	if len(grace) != 1 || created == "" {
		t.Fatalf("grace %v, created %q", grace, created)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "demote the other admin", Method: "PUT", Path: "/v1/users/" + grace[0].ID, Token: admin.Token,
			Body: map[string]any{"role": "user"}, Status: 200},
		{Name: "the last admin cannot be demoted", Method: "PUT", Path: "/v1/users/" + admin.UserID, Token: admin.Token,
			Body: map[string]any{"role": "user"}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"role"`, `"reason":"the last enabled admin cannot be demoted or disabled"`}},
		{Name: "the last admin cannot be disabled", Method: "PUT", Path: "/v1/users/" + admin.UserID, Token: admin.Token,
			Body: map[string]any{"disabled": true}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"disabled"`}},
		{Name: "nor both at once", Method: "PUT", Path: "/v1/users/" + admin.UserID, Token: admin.Token,
			Body: map[string]any{"name": "Still", "role": "user", "disabled": true}, Status: 400, Code: "VALIDATION_ERROR"},
		{Name: "the last admin is unchanged", Method: "GET", Path: "/v1/users/" + admin.UserID, Token: admin.Token, Status: 200,
			Contains: []string{`"role":"admin"`, `"disabled":false`, `"name":"Ada Admin"`}},
		{Name: "the created user is there", Method: "GET", Path: "/v1/users/" + created, Token: admin.Token, Status: 200},
	})
}
