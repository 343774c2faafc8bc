// Package sandbox runs the test environment of SANDBOX=true: demo users with
// sk_test_ keys and items, put back to that seed at start and on every reset
// interval without a restart.
//
// The seed is deterministic given one secret derived from the server secret
// (internal/secrets), never stored: the keys, and the ids of users,
// keys and items, are the same after every reset, on every replica and after
// every restart. So a printed key keeps working, and so does a token issued
// before a reset.
package sandbox

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/auth"
)

// seedEpoch is the time part of the seed's ids, so that they sort in seed
// order and look like ids of the same era as real ones.
var seedEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// demoUser is one user of the seed and the items it owns.
type demoUser struct {
	email, name string
	admin       bool
	items       []demoItem
}

type demoItem struct {
	name, description string
	archived          bool
}

// seedUsers is the whole seed: an admin, who sees every item, and two users,
// who see only their own.
func seedUsers() []demoUser {
	return []demoUser{
		{email: "admin@sandbox.test", name: "Sandbox Admin", admin: true, items: []demoItem{
			{name: "Admin checklist", description: "Admins see and change every user's items."},
		}},
		{email: "alice@sandbox.test", name: "Alice Example", items: []demoItem{
			{name: "Welcome to the sandbox", description: "Everything here returns to this seed on every reset."},
			{name: "Try updating me", description: "PUT /v1/items/{id} with any of name, description, status."},
			{name: "Try deleting me", description: "DELETE /v1/items/{id}; the reset brings me back."},
			{name: "An archived item", description: "GET /v1/items?status=archived finds me.", archived: true},
		}},
		{email: "bob@sandbox.test", name: "Bob Example", items: []demoItem{
			{name: "Bob's first item", description: "Alice cannot read this one (403)."},
			{name: "Bob's old item", description: "", archived: true},
		}},
	}
}

// Key is a demo user's API key, to print at start.
type Key struct {
	Email string
	Name  string
	Admin bool
	Key   string
}

// deriver makes the seed's keys and ids from the secret.
type deriver struct{ secret []byte }

func (d deriver) sum(parts ...string) []byte {
	m := hmac.New(sha256.New, d.secret)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return m.Sum(nil)
}

// key returns the API key of a demo user: sk_test_ and 32 characters, the
// shape of any other key (auth.LooksLikeKey).
func (d deriver) key(email string) string {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	return auth.TestPrefix + strings.ToLower(enc.EncodeToString(d.sum("key", email)[:20]))
}

// id returns a prefixed ULID whose time part is the seed epoch plus n
// milliseconds and whose random part comes from the secret.
func (d deriver) id(prefix string, n int, parts ...string) string {
	entropy := bytes.NewReader(d.sum(append([]string{prefix}, parts...)...))
	u, err := ulid.New(ulid.Timestamp(seedEpoch.Add(time.Duration(n)*time.Millisecond)), entropy)
	if err != nil {
		// Only a short entropy reader fails, and a SHA-256 sum is 32 bytes.
		panic(fmt.Sprintf("sandbox id: %v", err))
	}
	return prefix + strings.ToLower(u.String())
}

// seed writes the demo data in tx, which must hold no users.
func seed(ctx context.Context, tx *ent.Tx, d deriver) error {
	n := 0
	for _, du := range seedUsers() {
		role := user.RoleUser
		if du.admin {
			role = user.RoleAdmin
		}
		userID := d.id("user_", n, "user", du.email)
		n++
		if err := tx.User.Create().SetID(userID).SetEmail(du.email).SetName(du.name).SetRole(role).Exec(ctx); err != nil {
			return fmt.Errorf("seed user %s: %w", du.email, err)
		}
		key := d.key(du.email)
		err := tx.APIKey.Create().
			SetID(d.id("key_", n, "key", du.email)).
			SetUserID(userID).
			SetKeyHash(auth.HashKey(key)).
			SetPrefix(auth.DisplayPrefix(key)).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("seed key of %s: %w", du.email, err)
		}
		for i, di := range du.items {
			n++
			c := tx.Item.Create().
				SetID(d.id("item_", n, "item", du.email, fmt.Sprint(i))).
				SetUserID(userID).
				SetName(di.name).
				SetDescription(di.description)
			if di.archived {
				c.SetStatus(item.StatusArchived)
			}
			if err := c.Exec(ctx); err != nil {
				return fmt.Errorf("seed item %q: %w", di.name, err)
			}
		}
	}
	return nil
}
