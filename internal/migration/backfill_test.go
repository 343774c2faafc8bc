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
	// The counter starts after the last; on PostgreSQL it became the
	// sequence events_seq (the event_xid migration).
	next := `SELECT CAST(CAST(value AS bigint) + 1 AS text) FROM settings WHERE id = 'event_seq'`
	if db.Dialect == "postgres" {
		next = `SELECT CAST(nextval('events_seq') AS text)`
	}
	var counter string
	if err := db.SQL.QueryRowContext(ctx, next).Scan(&counter); err != nil || counter != "4" {
		t.Fatalf("next event seq = %q (%v), want 4", counter, err)
	}
}

// TestEventXidBackfill: events from before the event_xid migration get xid
// 0, so that they come first in the feeds' order (xid, seq), in their seq
// order; on PostgreSQL the seqs of new events come from the sequence
// events_seq, past every seq the counter gave, and the counter is gone; on
// SQLite the counter stays.
func TestEventXidBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kept, total := applyBefore(t, db, "_event_xid.sql")
	for _, stmt := range []string{
		`INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES
			('user_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a@example.com', 'A', 'user')`,
		`INSERT INTO events (id, created_at, updated_at, type, user_id, item_id, data, seq) VALUES
			('evt_c', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'item.created', 'user_a', 'item_1', '{}', 1),
			('evt_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'item.updated', 'user_a', 'item_1', '{}', 2),
			('evt_b', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'item.deleted', 'user_a', 'item_1', '{}', 3)`,
		// The counter is ahead of the last event: seqs taken by
		// transactions whose events are gone must not be given again.
		`UPDATE settings SET value = '7' WHERE id = 'event_seq'`,
	} {
		if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migration.Apply(ctx, db.SQL, db.Dialect); err != nil || n != total-kept {
		t.Fatalf("applied %d, err %v; want the rest of the history", n, err)
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT id, xid FROM events ORDER BY xid, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var id string
		var xid int64
		if err := rows.Scan(&id, &xid); err != nil {
			t.Fatal(err)
		}
		order = append(order, fmt.Sprintf("%s@%d", id, xid))
	}
	if got := strings.Join(order, ","); got != "evt_c@0,evt_a@0,evt_b@0" {
		t.Fatalf("(xid, seq) order %s, want evt_c@0,evt_a@0,evt_b@0", got)
	}
	var counters int
	if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE id = 'event_seq'`).Scan(&counters); err != nil {
		t.Fatal(err)
	}
	if db.Dialect == "postgres" {
		var next int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT nextval('events_seq')`).Scan(&next); err != nil || next != 8 {
			t.Fatalf("nextval(events_seq) = %d (%v), want 8", next, err)
		}
		if counters != 0 {
			t.Fatal("the settings counter event_seq is still there on PostgreSQL")
		}
	} else if counters != 1 {
		t.Fatal("the settings counter event_seq is gone on SQLite")
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
