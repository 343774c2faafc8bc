package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/sandbox"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/testutil"
)

type item struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// TestSandboxSeedAndReset runs a sandbox server: its printed keys log in,
// every response says it is a sandbox, changes made by clients are undone by
// the reset worker without a restart, and keys, ids and tokens survive it.
func TestSandboxSeedAndReset(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.Sandbox = true
		c.SandboxResetInterval = 50 * time.Millisecond
	}))
	ctx := context.Background()
	keys, err := env.App.Sandbox.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Fatalf("%d demo keys, want 3", len(keys))
	}
	tokens := map[string]string{}
	for _, k := range keys {
		if !strings.HasPrefix(k.Key, "sk_test_") {
			t.Errorf("%s: key %q is not a test key", k.Email, k.Key)
		}
		r := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": k.Key}})
		testutil.Scenario{Status: 200, HeaderIs: map[string]string{"X-Environment": "sandbox"}}.Assert(t, r)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		r.Data(t, &tok)
		tokens[k.Email] = tok.AccessToken
	}
	alice, admin := tokens["alice@sandbox.test"], tokens["admin@sandbox.test"]

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "alice sees her seed", Method: "GET", Path: "/v1/items", Token: alice, Status: 200, Contains: []string{`"total":4`}},
		{Name: "admin sees every seed item", Method: "GET", Path: "/v1/items", Token: admin, Status: 200, Contains: []string{`"total":7`}},
		{Name: "archived seed", Method: "GET", Path: "/v1/items?status=archived", Token: alice, Status: 200, Contains: []string{`"total":1`, "An archived item"}},
		{Name: "failures are marked too", Method: "GET", Path: "/v1/items", Status: 401, Code: "UNAUTHORIZED", HeaderIs: map[string]string{"X-Environment": "sandbox"}},
		{Name: "the first-start admin is not made", Method: "GET", Path: "/v1/users/me", Token: admin, Status: 200, Contains: []string{"admin@sandbox.test"}},
	})
	seed := aliceItems(t, env, alice)

	// A client plays: creates, deletes and changes items.
	env.CreateItem(testutil.Actor{Token: alice}, "made by a client")
	for _, it := range seed {
		switch it.Name {
		case "Try deleting me":
			env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + it.ID, Token: alice})
		case "Try updating me":
			env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + it.ID, Token: alice, Body: map[string]any{"name": "changed"}})
		}
	}
	if got := aliceItems(t, env, alice); len(got) != 4 || sameItems(got, seed) {
		t.Fatalf("changes did not take: %v", got)
	}
	// A restart keeps what clients did since the last reset.
	again, err := env.App.Sandbox.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := aliceItems(t, env, alice); sameItems(got, seed) {
		t.Fatal("Start reset a sandbox whose seed was in place")
	}
	for i := range keys {
		if again[i] != keys[i] {
			t.Errorf("key of %s changed across starts", keys[i].Email)
		}
	}

	// The reset worker, as the server runs it, brings the seed back; the
	// token issued before the reset still works.
	env.App.Start(ctx)
	if !testutil.Eventually(t, 10*time.Second, func() bool { return sameItems(aliceItems(t, env, alice), seed) }) {
		t.Fatalf("the reset worker did not restore the seed: %v, want %v", aliceItems(t, env, alice), seed)
	}
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": keys[1].Key}})
	testutil.Scenario{Status: 200}.Assert(t, r)
	// The totals (item counters) are the seed's again too.
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "alice's total after the reset", Method: "GET", Path: "/v1/items", Token: alice, Status: 200, Contains: []string{`"total":4`}},
		{Name: "admin's total after the reset", Method: "GET", Path: "/v1/items", Token: admin, Status: 200, Contains: []string{`"total":7`}},
	})
}

func aliceItems(t *testing.T, env *testutil.Env, token string) []item {
	t.Helper()
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?sort=name&order=asc", Token: token})
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var items []item
	r.Data(t, &items)
	return items
}

func sameItems(a, b []item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestKeysAreTheSameAfterReset: a reset on its own (no worker) keeps the
// demo keys and ids, so that the printed keys and bookmarked ids go on
// working, and leaves no outbox events behind.
func TestResetKeepsKeysAndIDs(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.Sandbox = true }))
	ctx := context.Background()
	sb := sandbox.New(env.App.DB.Client, env.App.Logger, time.Hour, env.App.Keys.Derive(secrets.PurposeSandbox))
	keys, err := sb.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok := login(t, env, keys[1].Key)
	before := aliceItems(t, env, tok)
	if err := sb.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sb.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	after := aliceItems(t, env, login(t, env, keys[1].Key))
	if !sameItems(before, after) {
		t.Errorf("ids changed across resets:\n%v\n%v", before, after)
	}
	n, err := env.App.DB.Client.Event.Query().Count(systemCtx(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d outbox events after a reset, want 0", n)
	}
}

func login(t *testing.T, env *testutil.Env, key string) string {
	t.Helper()
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": key}})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r.Data(t, &tok)
	return tok.AccessToken
}
