package migration_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/migration"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestAdminKeysUsersBackfill: keys from before the admin_keys_users
// migration keep every field and may still read and write (scopes had no
// column default to fill them); users from before it are enabled.
func TestAdminKeysUsersBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kept, total := applyBefore(t, db, "_admin_keys_users.sql")
	for _, stmt := range []string{
		`INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES
			('user_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a@example.com', 'A', 'admin')`,
		`INSERT INTO api_keys (id, created_at, updated_at, key_hash, prefix, user_id) VALUES
			('key_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'hash1', 'sk_live_abcd', 'user_a')`,
		`INSERT INTO items (id, created_at, updated_at, name, description, status, user_id, version) VALUES
			('item_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'one', '', 'active', 'user_a', 1)`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	var hash, prefix, label, scopesJSON, role string
	var disabled bool
	err = db.SQL.QueryRowContext(ctx, `SELECT k.key_hash, k.prefix, k.label, k.scopes, u.role, u.disabled
		FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = 'key_1'`).
		Scan(&hash, &prefix, &label, &scopesJSON, &role, &disabled)
	if err != nil {
		t.Fatal(err)
	}
	var scopes []string
	if err := json.Unmarshal([]byte(scopesJSON), &scopes); err != nil {
		t.Fatalf("scopes %q: %v", scopesJSON, err)
	}
	if hash != "hash1" || prefix != "sk_live_abcd" || label != "" || !slices.Equal(scopes, []string{"read", "write"}) || role != "admin" || disabled {
		t.Fatalf("after the migration: %s %s %q %v %s disabled=%v; want hash1 sk_live_abcd \"\" [read write] admin false",
			hash, prefix, label, scopes, role, disabled)
	}
	var items int
	if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM items WHERE user_id = 'user_a'`).Scan(&items); err != nil || items != 1 {
		t.Fatalf("items of the user after the rebuild of users: %d, %v", items, err)
	}
}
