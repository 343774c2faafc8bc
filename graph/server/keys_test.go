package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestKeysGraphQL: apiKeys, apiKey, createAPIKey, updateAPIKey and
// revokeAPIKey, the twins of /v1/keys (rest/keys_test.go), a row per case
// for each kind of caller, with REST's codes. Rows run in order.
func TestKeysGraphQL(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) { o.Service.KeyRecheck = 100 * time.Millisecond }))
	admin, alice, bob := env.Admin, env.Alice, env.Bob
	ro := env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
	spare := env.NewActor("alice@example.com", "Alice", false)
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
	const fields = `id userID label prefix scopes createdAt lastUsedAt expiresAt revokedAt rateLimitPerMinute rateLimitPerHour key`
	list := func(args string) string {
		return `{ apiKeys` + args + ` { totalCount edges { cursor node { id userID key } } pageInfo { hasNextPage endCursor } } }`
	}
	get := func(id string) string { return fmt.Sprintf(`{ apiKey(id: %q) { %s } }`, id, fields) }
	create := func(input string) string { return `mutation { createAPIKey(input: ` + input + `) { ` + fields + ` } }` }
	update := func(id, input string) string {
		return fmt.Sprintf(`mutation { updateAPIKey(id: %q, input: %s) { %s } }`, id, input, fields)
	}
	revoke := func(id string) string {
		return fmt.Sprintf(`mutation { revokeAPIKey(id: %q) { id revokedAt key } }`, id)
	}
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	long := strings.Repeat("x", 101)
	const unknownKey, unknownUser = "key_01jd8z6n3v5q1w2e3r4t5y6u7i", "user_01jd8z5k2m4n6p8q0r2s4t6v8w"

	rows := []struct {
		name, token, query string
		code               string // "" for success
		field              string // extensions.field of a VALIDATION_ERROR
		want               map[string]any
	}{
		// apiKeys
		{"list own keys", alice.Token, list(""), "", "", map[string]any{"totalCount": float64(3)}},
		{"a read-only key lists", ro.Token, list(""), "", "", map[string]any{"totalCount": float64(3)}},
		{"a user names themselves", alice.Token, list(fmt.Sprintf("(userID: %q)", alice.UserID)), "", "", map[string]any{"totalCount": float64(3)}},
		{"a user names another user", alice.Token, list(fmt.Sprintf("(userID: %q)", bob.UserID)), "NOT_FOUND", "", nil},
		{"admin lists another user's keys", admin.Token, list(fmt.Sprintf("(userID: %q)", bob.UserID)), "", "", map[string]any{"totalCount": float64(1)}},
		{"admin names an unknown user", admin.Token, list(fmt.Sprintf("(userID: %q)", unknownUser)), "NOT_FOUND", "", nil},
		{"a page of two", alice.Token, list("(first: 2)"), "", "", map[string]any{"totalCount": float64(3)}},
		{"a cursor not issued here", alice.Token, list(`(after: "nope")`), "VALIDATION_ERROR", "", nil},
		{"first past 100", alice.Token, list("(first: 101)"), "VALIDATION_ERROR", "first", nil},
		{"list with an expired key", expired.Token, list(""), "TOKEN_EXPIRED", "", nil},
		{"list as a disabled user", gone.Token, list(""), "UNAUTHORIZED", "", nil},

		// apiKey
		{"get own key", alice.Token, get(alice.KeyID), "", "", map[string]any{"id": alice.KeyID, "userID": alice.UserID, "key": nil, "revokedAt": nil}},
		{"a read-only key reads", ro.Token, get(alice.KeyID), "", "", nil},
		{"another user's key is not found", bob.Token, get(alice.KeyID), "NOT_FOUND", "", nil},
		{"admin reads anyone's key", admin.Token, get(alice.KeyID), "", "", nil},
		{"an unknown key", admin.Token, get(unknownKey), "NOT_FOUND", "", nil},
		{"get with an expired key", expired.Token, get(expired.KeyID), "TOKEN_EXPIRED", "", nil},
		{"get as a disabled user", gone.Token, get(gone.KeyID), "UNAUTHORIZED", "", nil},

		// createAPIKey
		{"create a read-only key that expires", alice.Token, create(fmt.Sprintf(`{label: "CI", scopes: [READ], expiresAt: %q}`, future)), "", "",
			map[string]any{"label": "CI", "userID": alice.UserID, "rateLimitPerMinute": nil}},
		{"create with the defaults", alice.Token, create(`{}`), "", "", map[string]any{"label": "", "expiresAt": nil}},
		{"admin creates a key for another user", admin.Token, create(fmt.Sprintf(`{userID: %q}`, bob.UserID)), "", "", map[string]any{"userID": bob.UserID}},
		{"admin names an unknown owner", admin.Token, create(fmt.Sprintf(`{userID: %q}`, unknownUser)), "NOT_FOUND", "", nil},
		{"a user may not create for another", alice.Token, create(fmt.Sprintf(`{userID: %q}`, bob.UserID)), "PERMISSION_DENIED", "", nil},
		{"an unknown scope", alice.Token, create(`{scopes: [ADMIN]}`), "VALIDATION_ERROR", "scopes", nil},
		{"empty scopes", alice.Token, create(`{scopes: []}`), "VALIDATION_ERROR", "scopes", nil},
		{"expiresAt in the past", alice.Token, create(fmt.Sprintf(`{expiresAt: %q}`, past)), "VALIDATION_ERROR", "expiresAt", nil},
		{"a label too long", alice.Token, create(fmt.Sprintf(`{label: %q}`, long)), "VALIDATION_ERROR", "label", nil},
		{"a read-only key may not create", ro.Token, create(`{}`), "PERMISSION_DENIED", "", nil},
		{"create with an expired key", expired.Token, create(`{}`), "TOKEN_EXPIRED", "", nil},
		{"create as a disabled user", gone.Token, create(`{}`), "UNAUTHORIZED", "", nil},

		// updateAPIKey
		{"relabel own key", alice.Token, update(alice.KeyID, `{label: "laptop"}`), "", "", map[string]any{"label": "laptop"}},
		{"a user may not set limits", alice.Token, update(alice.KeyID, `{rateLimitPerMinute: 3}`), "PERMISSION_DENIED", "", nil},
		{"a user may not set limits, even null", alice.Token, update(alice.KeyID, `{rateLimitPerHour: null}`), "PERMISSION_DENIED", "", nil},
		{"another user's key is not found on update", bob.Token, update(alice.KeyID, `{label: "m"}`), "NOT_FOUND", "", nil},
		{"admin sets limits", admin.Token, update(alice.KeyID, `{rateLimitPerMinute: 1000, rateLimitPerHour: 20000}`), "", "",
			map[string]any{"rateLimitPerMinute": float64(1000), "rateLimitPerHour": float64(20000), "label": "laptop"}},
		{"admin returns one to the default", admin.Token, update(alice.KeyID, `{rateLimitPerHour: null}`), "", "",
			map[string]any{"rateLimitPerMinute": float64(1000), "rateLimitPerHour": nil}},
		{"limit 0", admin.Token, update(alice.KeyID, `{rateLimitPerMinute: 0}`), "VALIDATION_ERROR", "rateLimitPerMinute", nil},
		{"a negative limit", admin.Token, update(alice.KeyID, `{rateLimitPerHour: -1}`), "VALIDATION_ERROR", "rateLimitPerHour", nil},
		{"a huge limit", admin.Token, update(alice.KeyID, `{rateLimitPerMinute: 1000001}`), "VALIDATION_ERROR", "rateLimitPerMinute", nil},
		{"a label too long on update", admin.Token, update(alice.KeyID, fmt.Sprintf(`{label: %q}`, long)), "VALIDATION_ERROR", "label", nil},
		{"an unknown key on update", admin.Token, update(unknownKey, `{label: "x"}`), "NOT_FOUND", "", nil},
		{"a read-only key may not update", ro.Token, update(ro.KeyID, `{label: "x"}`), "PERMISSION_DENIED", "", nil},
		{"update with an expired key", expired.Token, update(expired.KeyID, `{label: "x"}`), "TOKEN_EXPIRED", "", nil},
		{"update as a disabled user", gone.Token, update(gone.KeyID, `{label: "x"}`), "UNAUTHORIZED", "", nil},
		{"the refused updates changed nothing", alice.Token, get(alice.KeyID), "", "",
			map[string]any{"label": "laptop", "rateLimitPerMinute": float64(1000), "rateLimitPerHour": nil}},

		// revokeAPIKey
		{"another user's key is not found on revoke", bob.Token, revoke(spare.KeyID), "NOT_FOUND", "", nil},
		{"a read-only key may not revoke", ro.Token, revoke(spare.KeyID), "PERMISSION_DENIED", "", nil},
		{"revoke with an expired key", expired.Token, revoke(expired.KeyID), "TOKEN_EXPIRED", "", nil},
		{"revoke as a disabled user", gone.Token, revoke(gone.KeyID), "UNAUTHORIZED", "", nil},
		{"the spare key works", spare.Token, `{ me { id } }`, "", "", nil},
		{"revoke own key", alice.Token, revoke(spare.KeyID), "", "", map[string]any{"id": spare.KeyID, "key": nil}},
		{"its token stops at once", spare.Token, `{ me { id } }`, "UNAUTHORIZED", "", nil},
		{"revoking again answers the key", alice.Token, revoke(spare.KeyID), "", "", map[string]any{"id": spare.KeyID}},
		{"an unknown key on revoke", admin.Token, revoke(unknownKey), "NOT_FOUND", "", nil},
		{"admin revokes another user's key", admin.Token, revoke(bob.KeyID), "", "", map[string]any{"id": bob.KeyID}},
		{"that token stops too", bob.Token, `{ me { id } }`, "UNAUTHORIZED", "", nil},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			res := testutil.GQL(t, env, r.token, r.query, nil)
			if res.Code() != r.code {
				t.Fatalf("code %q, want %q: %s", res.Code(), r.code, res.Raw)
			}
			if r.field != "" && res.Errors[0].Extensions["field"] != r.field {
				t.Fatalf("field %v, want %s: %s", res.Errors[0].Extensions["field"], r.field, res.Raw)
			}
			if r.code != "" {
				for k, v := range res.Data {
					if v != nil {
						t.Fatalf("data.%s = %v beside the error", k, v)
					}
				}
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
		})
	}

	// The secret is in createAPIKey's answer only, in its scopes' spelling,
	// and logs in; the revoked key's revokedAt is set.
	r := testutil.GQL(t, env, alice.Token, create(`{scopes: [WRITE, READ]}`), nil).OK(t)
	key, _ := r.At(t, "createAPIKey", "key").(string)
	if !strings.HasPrefix(key, "sk_") || fmt.Sprint(r.At(t, "createAPIKey", "scopes")) != "[READ WRITE]" {
		t.Fatalf("createAPIKey: %s", r.Raw)
	}
	if _, err := env.App.Service.Login(t.Context(), key); err != nil {
		t.Fatalf("the created key does not log in: %v", err)
	}
	if r := testutil.GQL(t, env, alice.Token, get(spare.KeyID), nil).OK(t); r.At(t, "apiKey", "revokedAt") == nil {
		t.Fatalf("revoked key: %s", r.Raw)
	}
	// Pages follow one another by endCursor, newest first, no key twice.
	first := testutil.GQL(t, env, alice.Token, list("(first: 2)"), nil).OK(t)
	end := first.At(t, "apiKeys", "pageInfo", "endCursor").(string)
	rest := testutil.GQL(t, env, alice.Token, list(fmt.Sprintf("(first: 10, after: %q)", end)), nil).OK(t)
	seen := map[string]bool{}
	for _, page := range []testutil.GQLResponse{first, rest} {
		for _, e := range page.At(t, "apiKeys", "edges").([]any) {
			id := e.(map[string]any)["node"].(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("%s twice", id)
			}
			seen[id] = true
		}
	}
	if n := first.At(t, "apiKeys", "totalCount").(float64); int(n) != len(seen) {
		t.Fatalf("pages hold %d keys, totalCount %v", len(seen), n)
	}
}
