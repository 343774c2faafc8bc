package migration_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/migration"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestItemCountsBackfill: a database with items from before the item_counts
// migration gets counters that count them exactly.
func TestItemCountsBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// The history up to, not including, the migration under test.
	files, err := migration.Files(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for kept < len(files) && !strings.HasSuffix(files[kept].Name, "_item_counts.sql") {
		kept++
	}
	if kept == len(files) {
		t.Fatal("no item_counts migration")
	}
	if _, err := migration.ApplyFiles(ctx, db.SQL, db.Dialect, files[:kept]); err != nil {
		t.Fatal(err)
	}

	for _, stmt := range []string{
		`INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES
			('user_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a@example.com', 'A', 'user'),
			('user_b', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'b@example.com', 'B', 'admin'),
			('user_c', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'c@example.com', 'C', 'user')`,
		`INSERT INTO items (id, created_at, updated_at, name, description, status, user_id) VALUES
			('item_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'one', '', 'active', 'user_a'),
			('item_2', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'two', '', 'active', 'user_a'),
			('item_3', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'three', '', 'archived', 'user_a'),
			('item_4', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'four', '', 'archived', 'user_b'),
			('item_5', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'five', '', 'archived', 'user_b')`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}

	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != len(files)-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT user_id, status, count FROM item_counts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var user, status string
		var n int
		if err := rows.Scan(&user, &status, &n); err != nil {
			t.Fatal(err)
		}
		got[user+" "+status] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"user_a active": 2, "user_a archived": 1, "user_b archived": 2}
	if !maps.Equal(got, want) {
		t.Fatalf("backfilled counters %v, want %v", got, want)
	}
}
