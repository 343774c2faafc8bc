package migration_test

import (
	"context"
	"fmt"
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

	kept, total := applyBefore(t, db, "_item_counts.sql")

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

	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
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

// applyBefore applies the migration history up to, not including, the file
// whose name ends with suffix; it returns how many it applied and how many
// there are in all.
func applyBefore(t *testing.T, db *database.DB, suffix string) (kept, total int) {
	t.Helper()
	files, err := migration.Files(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	for kept < len(files) && !strings.HasSuffix(files[kept].Name, suffix) {
		kept++
	}
	if kept == len(files) {
		t.Fatalf("no migration ending %s", suffix)
	}
	if _, err := migration.ApplyFiles(context.Background(), db.SQL, db.Dialect, files[:kept]); err != nil {
		t.Fatal(err)
	}
	return kept, len(files)
}

// TestEventSeqBackfill: events from before the event_seq migration get
// seqs in the order they were written, and the counter new events take
// theirs from starts after the last.
func TestEventSeqBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kept, total := applyBefore(t, db, "_event_seq.sql")
	for _, stmt := range []string{
		`INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES
			('user_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a@example.com', 'A', 'user')`,
		// Ids out of write order, as app-made ids can be.
		`INSERT INTO events (id, created_at, updated_at, type, user_id, item_id, data) VALUES
			('evt_c', '2026-01-01 10:00:01', '2026-01-01 10:00:01', 'item.created', 'user_a', 'item_1', '{}'),
			('evt_a', '2026-01-01 10:00:02', '2026-01-01 10:00:02', 'item.updated', 'user_a', 'item_1', '{}'),
			('evt_b', '2026-01-01 10:00:03', '2026-01-01 10:00:03', 'item.deleted', 'user_a', 'item_1', '{}')`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT id FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		order = append(order, id)
	}
	if got := strings.Join(order, ","); got != "evt_c,evt_a,evt_b" {
		t.Fatalf("seq order %s, want the write order evt_c,evt_a,evt_b", got)
	}
	var counter string
	if err := db.SQL.QueryRowContext(ctx, `SELECT value FROM settings WHERE id = 'event_seq'`).Scan(&counter); err != nil || counter != "3" {
		t.Fatalf("event_seq counter = %q (%v), want 3", counter, err)
	}
}

// TestItemCountSlotsCarryOver: counters from before the item_count_slots
// migration become slot 0 of their owner and status, with their counts, and
// the upsert of the hooks (on user_id, status and slot) adds to them.
func TestItemCountSlotsCarryOver(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kept, total := applyBefore(t, db, "_item_count_slots.sql")
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO item_counts (user_id, status, count) VALUES
		('user_a', 'active', 7), ('user_a', 'archived', 1), ('user_b', 'active', 3)`); err != nil {
		t.Fatal(err)
	}
	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	upsert := `INSERT INTO item_counts (user_id, status, slot, count) VALUES ('user_a', 'active', 0, 2)
		ON CONFLICT (user_id, status, slot) DO UPDATE SET count = item_counts.count + excluded.count`
	if _, err := db.SQL.ExecContext(ctx, upsert); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT user_id, status, slot, count FROM item_counts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var user, status string
		var slot, n int
		if err := rows.Scan(&user, &status, &slot, &n); err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("%s %s %d", user, status, slot)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"user_a active 0": 9, "user_a archived 0": 1, "user_b active 0": 3}
	if !maps.Equal(got, want) {
		t.Fatalf("counters after the migration %v, want %v", got, want)
	}
}
