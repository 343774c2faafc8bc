package service_test

import (
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestKeyLastUsed: a key's last_used_at is set when it is used, and written
// again only once it is a minute old (a busy key does not write on every
// login or token check); the write is in the background, so the test polls.
func TestKeyLastUsed(t *testing.T) {
	env := testutil.New(t)
	ctx := testutil.SystemContext(t)
	keys := env.App.DB.Client.APIKey
	lastUsed := func() *time.Time {
		k, err := keys.Get(ctx, env.Alice.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		return k.LastUsedAt
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool { return lastUsed() != nil }) {
		t.Fatal("last_used_at is still unset after a login")
	}

	recent := time.Now().Add(-30 * time.Second).UTC().Truncate(time.Second)
	if err := keys.UpdateOneID(env.Alice.KeyID).SetLastUsedAt(recent).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.Login(ctx, env.Alice.Key); err != nil {
		t.Fatal(err)
	}
	// Login decides at once that a stamp younger than a minute stays.
	if got := lastUsed(); got == nil || !got.Equal(recent) {
		t.Fatalf("last_used_at %v after a login, want it kept at %v", got, recent)
	}

	old := time.Now().Add(-2 * time.Minute).UTC()
	if err := keys.UpdateOneID(env.Alice.KeyID).SetLastUsedAt(old).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.Login(ctx, env.Alice.Key); err != nil {
		t.Fatal(err)
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool {
		got := lastUsed()
		return got != nil && time.Since(*got) < time.Minute
	}) {
		t.Fatalf("last_used_at %v, want it moved to now after a login", lastUsed())
	}
}
