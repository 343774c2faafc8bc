package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestUserAdministrationGraphQL: user(id), createUser and updateUser, the
// twins of GET, POST and PUT /v1/users (rest/users_admin_test.go), a row per
// case for each kind of caller, with REST's codes. Rows run in order.
func TestUserAdministrationGraphQL(t *testing.T) {
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
	testutil.Eventually(t, 5*time.Second, func() bool {
		return testutil.GQL(t, env, gone.Token, `{ me { id } }`, nil).Code() == "UNAUTHORIZED" &&
			testutil.GQL(t, env, expired.Token, `{ me { id } }`, nil).Code() == "TOKEN_EXPIRED"
	})
	user := func(id string) string { return fmt.Sprintf(`{ user(id: %q) { email role disabled } }`, id) }
	update := func(id, input string) string {
		return fmt.Sprintf(`mutation { updateUser(id: %q, input: %s) { name role disabled } }`, id, input)
	}
	create := func(input string) string {
		return `mutation { createUser(input: ` + input + `) { id email role disabled } }`
	}

	rows := []struct {
		name, token, query string
		code               string // "" for success
		field              string // extensions.field of a VALIDATION_ERROR
		want               map[string]any
	}{
		{"admin reads a user", admin.Token, user(alice.UserID), "", "", map[string]any{"role": "USER", "disabled": false}},
		{"a user reads themselves", alice.Token, user(alice.UserID), "", "", nil},
		{"a read-only key reads", ro.Token, user(alice.UserID), "", "", nil},
		{"another user is not found", bob.Token, user(alice.UserID), "NOT_FOUND", "", nil},
		{"an expired key", expired.Token, user(expired.UserID), "TOKEN_EXPIRED", "", nil},
		{"a disabled user", gone.Token, user(gone.UserID), "UNAUTHORIZED", "", nil},
		{"admin creates a user", admin.Token, create(`{email: "Frank@Example.com", name: "Frank"}`), "", "",
			map[string]any{"email": "frank@example.com", "role": "USER", "disabled": false}},
		{"admin creates an admin", admin.Token, create(`{email: "grace@example.com", name: "Grace", role: ADMIN}`), "", "",
			map[string]any{"role": "ADMIN"}},
		{"an email taken", admin.Token, create(`{email: "ALICE@example.com", name: "A"}`), "VALIDATION_ERROR", "email", nil},
		{"an unknown role", admin.Token, create(`{email: "h@example.com", name: "H", role: ROOT}`), "VALIDATION_ERROR", "", nil},
		{"a user may not create", alice.Token, create(`{email: "h@example.com", name: "H"}`), "PERMISSION_DENIED", "", nil},
		{"a read-only key may not", ro.Token, create(`{email: "h@example.com", name: "H"}`), "PERMISSION_DENIED", "", nil},
		{"a user renames themselves", alice.Token, update(alice.UserID, `{name: "Alice A."}`), "", "", map[string]any{"name": "Alice A."}},
		{"a user may not change their role", alice.Token, update(alice.UserID, `{role: ADMIN}`), "PERMISSION_DENIED", "", nil},
		{"another user is not found", bob.Token, update(alice.UserID, `{name: "M"}`), "NOT_FOUND", "", nil},
		{"a read-only key may not rename", ro.Token, update(alice.UserID, `{name: "RO"}`), "PERMISSION_DENIED", "", nil},
		{"an empty name", admin.Token, update(alice.UserID, `{name: " "}`), "VALIDATION_ERROR", "name", nil},
		{"a user is named by id, not email, as on REST", admin.Token, update("alice@example.com", `{name: "By Email"}`), "NOT_FOUND", "", nil},
		{"admin disables a user", admin.Token, update(bob.UserID, `{disabled: true}`), "", "", map[string]any{"disabled": true}},
		{"the disabled user's token stops", bob.Token, `{ me { id } }`, "UNAUTHORIZED", "", nil},
		{"admin enables them", admin.Token, update(bob.UserID, `{disabled: false}`), "", "", map[string]any{"disabled": false}},
		{"demote the other admin, grace", admin.Token,
			`mutation { updateUser(id: "` + "GRACE" + `", input: {role: USER}) { role } }`, "", "", nil},
		{"the last admin cannot be demoted", admin.Token, update(admin.UserID, `{role: USER}`), "VALIDATION_ERROR", "role", nil},
		{"the last admin cannot be disabled", admin.Token, update(admin.UserID, `{disabled: true}`), "VALIDATION_ERROR", "disabled", nil},
	}
	var grace string
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			q := strings.Replace(r.query, `"GRACE"`, fmt.Sprintf("%q", grace), 1)
			res := testutil.GQL(t, env, r.token, q, nil)
			if res.Code() != r.code {
				t.Fatalf("code %q, want %q: %s", res.Code(), r.code, res.Raw)
			}
			if r.field != "" && res.Errors[0].Extensions["field"] != r.field {
				t.Fatalf("field %v, want %s: %s", res.Errors[0].Extensions["field"], r.field, res.Raw)
			}
			if r.code != "" {
				return
			}
			var obj map[string]any
			for _, v := range res.Data {
				obj, _ = v.(map[string]any)
			}
			for k, v := range r.want {
				if obj[k] != v {
					t.Fatalf("%s = %v, want %v: %s", k, obj[k], v, res.Raw)
				}
			}
			if obj["email"] == "grace@example.com" {
				grace, _ = obj["id"].(string)
			}
		})
	}
	if r := testutil.GQL(t, env, admin.Token, user(admin.UserID), nil).OK(t); r.At(t, "user", "role") != "ADMIN" || r.At(t, "user", "disabled") != false {
		t.Fatalf("the last admin after the refusals: %s", r.Raw)
	}
}
