package migration_test

import (
	"context"
	"testing"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/migration"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestItemVersionBackfill: items from before the item_version migration keep
// every field (SQLite rebuilds the table) and start at version 1, the
// version of a new item, so their ETags are those of untouched items.
func TestItemVersionBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kept, total := applyBefore(t, db, "_item_version.sql")
	for _, stmt := range []string{
		`INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES
			('user_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a@example.com', 'A', 'user')`,
		`INSERT INTO items (id, created_at, updated_at, name, description, status, user_id) VALUES
			('item_1', '2026-01-01 10:00:00', '2026-01-02 10:00:00', 'one', 'first', 'archived', 'user_a')`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	var name, description, status, user string
	var version int
	err = db.SQL.QueryRowContext(ctx, `SELECT name, description, status, user_id, version FROM items WHERE id = 'item_1'`).
		Scan(&name, &description, &status, &user, &version)
	if err != nil {
		t.Fatal(err)
	}
	if name != "one" || description != "first" || status != "archived" || user != "user_a" || version != 1 {
		t.Fatalf("item after the migration: %s %s %s %s v%d, want one first archived user_a v1", name, description, status, user, version)
	}
}
