package testutil

import (
	"context"
	"testing"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/privacy"
)

// NewKeyActor is NewActor with the new key changed by edit (its scopes,
// expiry) before it logs in; a nil edit changes nothing.
func (e *Env) NewKeyActor(email, name string, admin bool, edit func(*ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne) Actor {
	e.T.Helper()
	ctx := context.Background()
	k, err := e.App.Service.CreateKey(ctx, email, name, admin)
	if err != nil {
		e.T.Fatalf("create key for %s: %v", email, err)
	}
	if edit != nil {
		if err := edit(e.App.DB.Client.APIKey.UpdateOneID(k.KeyID)).Exec(privacy.DecisionContext(ctx, privacy.Allow)); err != nil {
			e.T.Fatalf("edit key of %s: %v", email, err)
		}
	}
	tok, err := e.App.Service.Login(ctx, k.Key)
	if err != nil {
		e.T.Fatalf("login %s: %v", email, err)
	}
	return Actor{UserID: k.UserID, KeyID: k.KeyID, Key: k.Key, Token: tok.AccessToken}
}

// ReadOnly is a NewKeyActor edit that leaves the key only the read scope.
func ReadOnly(u *ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne {
	return u.SetScopes([]string{"read"})
}

// SystemContext is the test's context with every privacy rule allowing: for
// fixtures that change what no API offers to change (a key's expiry).
func SystemContext(t testing.TB) context.Context {
	return privacy.DecisionContext(context.Background(), privacy.Allow)
}
