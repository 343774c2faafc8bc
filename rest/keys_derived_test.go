package rest_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// keyAsked is a createAPIKey request in REST's words; zero fields are absent.
type keyAsked struct {
	Scopes    []string
	ExpiresAt time.Time
	UserID    string
}

// keyMade is what either API answered to a create: the error's code, field
// and max_keys, or the key.
type keyMade struct {
	Code, Field string
	MaxKeys     float64
	ID          string
	Scopes      []string
	ExpiresAt   *time.Time
	PerMinute   *float64
}

// keyAPI makes and revokes keys on one API, through the real router.
type keyAPI struct {
	name   string
	create func(t *testing.T, env *testutil.Env, token string, in keyAsked) keyMade
	revoke func(t *testing.T, env *testutil.Env, token, id string)
}

// keyAPIs are POST /v1/keys and GraphQL's createAPIKey, with their revokes.
var keyAPIs = []keyAPI{
	{
		name: "REST",
		create: func(t *testing.T, env *testutil.Env, token string, in keyAsked) keyMade {
			t.Helper()
			body := map[string]any{}
			if in.Scopes != nil {
				body["scopes"] = in.Scopes
			}
			if !in.ExpiresAt.IsZero() {
				body["expires_at"] = in.ExpiresAt.Format(time.RFC3339Nano)
			}
			if in.UserID != "" {
				body["user_id"] = in.UserID
			}
			r := env.Do(testutil.Request{Method: "POST", Path: "/v1/keys", Token: token, Body: body})
			var out struct {
				Data struct {
					ID                 string     `json:"id"`
					Scopes             []string   `json:"scopes"`
					ExpiresAt          *time.Time `json:"expires_at"`
					RateLimitPerMinute *float64   `json:"rate_limit_per_minute"`
				} `json:"data"`
				Error struct {
					Code    string         `json:"code"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			testutil.MustJSON(t, r.Body, &out)
			if (r.Status == http.StatusCreated) != (out.Error.Code == "") {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			field, _ := out.Error.Details["field"].(string)
			maxKeys, _ := out.Error.Details["limit"].(float64)
			return keyMade{Code: out.Error.Code, Field: field, MaxKeys: maxKeys, ID: out.Data.ID,
				Scopes: out.Data.Scopes, ExpiresAt: out.Data.ExpiresAt, PerMinute: out.Data.RateLimitPerMinute}
		},
		revoke: func(t *testing.T, env *testutil.Env, token, id string) {
			t.Helper()
			if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/keys/" + id, Token: token}); r.Status != 200 {
				t.Fatalf("revoke: %d %s", r.Status, r.Body)
			}
		},
	},
	{
		name: "GraphQL",
		create: func(t *testing.T, env *testutil.Env, token string, in keyAsked) keyMade {
			t.Helper()
			input := map[string]any{}
			if in.Scopes != nil {
				scopes := make([]string, len(in.Scopes))
				for i, s := range in.Scopes {
					scopes[i] = strings.ToUpper(s)
				}
				input["scopes"] = scopes
			}
			if !in.ExpiresAt.IsZero() {
				input["expiresAt"] = in.ExpiresAt.Format(time.RFC3339Nano)
			}
			if in.UserID != "" {
				input["userID"] = in.UserID
			}
			r := testutil.GQL(t, env, token, `mutation($input: CreateAPIKeyInput!) {
				createAPIKey(input: $input) { id scopes expiresAt rateLimitPerMinute } }`, map[string]any{"input": input})
			if code := r.Code(); code != "" {
				field, _ := r.Errors[0].Extensions["field"].(string)
				maxKeys, _ := r.Errors[0].Extensions["limit"].(float64)
				return keyMade{Code: code, Field: field, MaxKeys: maxKeys}
			}
			var out struct {
				Data struct {
					CreateAPIKey struct {
						ID                 string
						Scopes             []string
						ExpiresAt          *time.Time
						RateLimitPerMinute *float64
					}
				}
			}
			testutil.MustJSON(t, r.OK(t).Raw, &out)
			k := out.Data.CreateAPIKey
			for i, s := range k.Scopes {
				k.Scopes[i] = strings.ToLower(s)
			}
			return keyMade{ID: k.ID, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, PerMinute: k.RateLimitPerMinute}
		},
		revoke: func(t *testing.T, env *testutil.Env, token, id string) {
			t.Helper()
			testutil.GQL(t, env, token, `mutation($id: ID!) { revokeAPIKey(id: $id) { id } }`, map[string]any{"id": id}).OK(t)
		},
	},
}

// expiresAt is a key's stored expiry, as the database keeps it.
func expiresAt(t *testing.T, env *testutil.Env, keyID string) time.Time {
	t.Helper()
	k, err := env.App.DB.Client.APIKey.Get(testutil.SystemContext(t), keyID)
	if err != nil || k.ExpiresAt == nil {
		t.Fatalf("key %s: %v, expiry %v", keyID, err, k)
	}
	return *k.ExpiresAt
}

// TestKeysDerivedFromAKey: a key made with a key's token outranks it in
// nothing (DESIGN §10), on both APIs: its expiry defaults to the parent's
// and may not be later, whoever it is for (an admin's key for another user
// too); its scopes default to the parent's and may not add one; it carries
// the parent's own rate limits. A read-only key still makes no key at all.
func TestKeysDerivedFromAKey(t *testing.T) {
	for _, api := range keyAPIs {
		t.Run(api.name, func(t *testing.T) {
			env := testutil.New(t)
			soon := time.Now().Add(10 * time.Minute)
			short := env.NewKeyActor("alice@example.com", "Alice", false, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
				return u.SetExpiresAt(soon)
			})
			adminShort := env.NewKeyActor("admin@example.com", "Ada Admin", true, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
				return u.SetExpiresAt(soon)
			})
			writeOnly := env.NewKeyActor("alice@example.com", "Alice", false, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
				return u.SetScopes([]string{"write"})
			})
			readOnly := env.NewKeyActor("alice@example.com", "Alice", false, testutil.ReadOnly)
			limited := env.NewKeyActor("alice@example.com", "Alice", false, func(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
				return u.SetRateLimitPerMinute(3)
			})
			shortEnd, adminEnd := expiresAt(t, env, short.KeyID), expiresAt(t, env, adminShort.KeyID)
			earlier := time.Now().Add(5 * time.Minute).UTC().Truncate(time.Second)
			later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			three := 3.0

			rows := []struct {
				name  string
				token string
				in    keyAsked
				want  keyMade // Code and Field of a refusal, else Scopes, ExpiresAt, PerMinute
			}{
				{"a key expiring in 10 minutes makes one without expiry: it expires with its parent", short.Token, keyAsked{},
					keyMade{Scopes: []string{"read", "write"}, ExpiresAt: &shortEnd}},
				{"it asks for a later expiry: refused", short.Token, keyAsked{ExpiresAt: later},
					keyMade{Code: "VALIDATION_ERROR", Field: "expires_at"}},
				{"it asks for an earlier expiry: kept", short.Token, keyAsked{ExpiresAt: earlier},
					keyMade{Scopes: []string{"read", "write"}, ExpiresAt: &earlier}},
				{"an admin's expiring key makes a key for another user: the same ceiling", adminShort.Token, keyAsked{UserID: env.Bob.UserID},
					keyMade{Scopes: []string{"read", "write"}, ExpiresAt: &adminEnd}},
				{"and past it for another user: refused", adminShort.Token, keyAsked{UserID: env.Bob.UserID, ExpiresAt: later},
					keyMade{Code: "VALIDATION_ERROR", Field: "expires_at"}},
				{"a write-only key makes one without scopes: write alone", writeOnly.Token, keyAsked{},
					keyMade{Scopes: []string{"write"}}},
				{"a write-only key asks for read: refused", writeOnly.Token, keyAsked{Scopes: []string{"read", "write"}},
					keyMade{Code: "VALIDATION_ERROR", Field: "scopes"}},
				{"a read-only key makes no key at all", readOnly.Token, keyAsked{Scopes: []string{"read"}},
					keyMade{Code: "PERMISSION_DENIED"}},
				{"a key limited to 3 a minute makes one limited the same", limited.Token, keyAsked{Scopes: []string{"read"}},
					keyMade{Scopes: []string{"read"}, PerMinute: &three}},
				{"a key without expiry or limits makes one without", env.Alice.Token, keyAsked{},
					keyMade{Scopes: []string{"read", "write"}}},
			}
			if api.name == "GraphQL" {
				rows[1].want.Field, rows[4].want.Field = "expiresAt", "expiresAt"
			}
			for _, r := range rows {
				t.Run(r.name, func(t *testing.T) {
					got := api.create(t, env, r.token, r.in)
					if got.Code != r.want.Code || got.Field != r.want.Field {
						t.Fatalf("code %q field %q, want %q %q", got.Code, got.Field, r.want.Code, r.want.Field)
					}
					if got.Code != "" {
						return
					}
					if !slices.Equal(got.Scopes, r.want.Scopes) {
						t.Errorf("scopes %v, want %v", got.Scopes, r.want.Scopes)
					}
					if (got.ExpiresAt == nil) != (r.want.ExpiresAt == nil) ||
						got.ExpiresAt != nil && !got.ExpiresAt.Equal(*r.want.ExpiresAt) {
						t.Errorf("expires at %v, want %v", got.ExpiresAt, r.want.ExpiresAt)
					}
					if (got.PerMinute == nil) != (r.want.PerMinute == nil) ||
						got.PerMinute != nil && *got.PerMinute != *r.want.PerMinute {
						t.Errorf("rate_limit_per_minute %v, want %v", got.PerMinute, r.want.PerMinute)
					}
				})
			}
		})
	}
}

// TestKeyCap: MAX_KEYS_PER_USER caps a user's active keys on both APIs:
// past it a create is refused, naming user_id and the cap, for the user and
// for an admin making a key for them; revoking or the expiry of one frees a
// slot; another user's keys do not count; the operator's CLI is not held to
// it (it is the way back in), and the API still refuses past it.
func TestKeyCap(t *testing.T) {
	for _, api := range keyAPIs {
		t.Run(api.name, func(t *testing.T) {
			env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.MaxKeysPerUser = 3 }))
			alice := env.Alice // Alice's first key: 1 of 3
			field := map[string]string{"REST": "user_id", "GraphQL": "userID"}[api.name]
			var made []string
			ok := func(token string, in keyAsked) func(t *testing.T) {
				return func(t *testing.T) {
					got := api.create(t, env, token, in)
					if got.Code != "" {
						t.Fatalf("refused: %+v", got)
					}
					made = append(made, got.ID)
				}
			}
			full := func(token string, in keyAsked) func(t *testing.T) {
				return func(t *testing.T) {
					got := api.create(t, env, token, in)
					if got.Code != "VALIDATION_ERROR" || got.Field != field || got.MaxKeys != 3 {
						t.Fatalf("got %+v, want VALIDATION_ERROR naming %s with limit 3", got, field)
					}
				}
			}
			rows := []struct {
				name string
				run  func(t *testing.T)
			}{
				{"the second key", ok(alice.Token, keyAsked{})},
				{"the third key", ok(alice.Token, keyAsked{Scopes: []string{"read"}})},
				{"a fourth is refused", full(alice.Token, keyAsked{})},
				{"an admin's for her is refused too", full(env.Admin.Token, keyAsked{UserID: alice.UserID})},
				{"another user's keys do not count", ok(env.Bob.Token, keyAsked{})},
				{"revoking one frees a slot", func(t *testing.T) {
					api.revoke(t, env, alice.Token, made[0])
					ok(alice.Token, keyAsked{})(t)
				}},
				{"full again", full(alice.Token, keyAsked{})},
				{"an expired key does not count", func(t *testing.T) {
					if err := env.App.DB.Client.APIKey.UpdateOneID(made[1]).SetExpiresAt(time.Now().Add(-time.Second)).
						Exec(testutil.SystemContext(t)); err != nil {
						t.Fatal(err)
					}
					ok(env.Admin.Token, keyAsked{UserID: alice.UserID})(t)
				}},
				{"the operator's CLI is not held to the cap", func(t *testing.T) {
					if _, err := env.App.Service.CreateKey(t.Context(), "alice@example.com", "", false); err != nil {
						t.Fatal(err)
					}
				}},
				{"the API still refuses past it", full(alice.Token, keyAsked{})},
			}
			for _, r := range rows {
				t.Run(r.name, r.run)
			}
		})
	}
}

// TestKeyCapConcurrent: creates sent together by a user one key short of
// the cap by many make exactly the keys the cap leaves room for: on
// PostgreSQL the owner's row is locked while the keys are counted, SQLite
// has one writer.
func TestKeyCapConcurrent(t *testing.T) {
	const maxKeys, senders = 5, 32
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.MaxKeysPerUser = maxKeys }))
	statuses := make([]int, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			statuses[i] = env.Do(testutil.Request{Method: "POST", Path: "/v1/keys", Token: env.Alice.Token, Body: map[string]any{}}).Status
		})
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusBadRequest:
		default:
			t.Errorf("status %d", s)
		}
	}
	if created != maxKeys-1 {
		t.Errorf("%d creates succeeded, want %d (the cap %d less Alice's first key)", created, maxKeys-1, maxKeys)
	}
	if n := keyCount(t, env, env.Alice.UserID); n != maxKeys {
		t.Errorf("Alice holds %d keys, want %d", n, maxKeys)
	}
}

// TestKeyCapOff: MAX_KEYS_PER_USER=0 turns the cap off: a user makes more
// keys than the default cap allows.
func TestKeyCapOff(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.MaxKeysPerUser = 0 }))
	for i := range service.DefaultMaxKeysPerUser {
		if r := env.Do(testutil.Request{Method: "POST", Path: "/v1/keys", Token: env.Alice.Token, Body: map[string]any{}}); r.Status != http.StatusCreated {
			t.Fatalf("key %d of %d: %d %s", i+2, service.DefaultMaxKeysPerUser+1, r.Status, r.Body)
		}
	}
}
