package rest_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/migration"
	"github.com/acme/itemsvc/internal/testutil"
)

// canonicalTime is the one text of a time stored on SQLite
// (database.TimeLayout).
var canonicalTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// timeColumns lists the time columns of every table of an SQLite database,
// as table.column.
func timeColumns(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND p.type = 'datetime' ORDER BY m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, table+"."+col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// storedTimes returns the stored text of every non-null value of a time
// column (table.column), read raw: CAST keeps the driver from parsing it.
func storedTimes(t *testing.T, db *sql.DB, col string) []string {
	t.Helper()
	table, name, _ := strings.Cut(col, ".")
	rows, err := db.Query(fmt.Sprintf("SELECT CAST(`%s` AS text) FROM `%s` WHERE `%s` IS NOT NULL", name, table, name))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoredTimesAreCanonical: after creates and updates through the API
// (and the writes of the workers' tables through the same pool), every time
// column of every table holds RFC 3339 UTC text with six fractional digits,
// never Go's time.String() (a monotonic "m=+…" suffix, a zone name).
// PostgreSQL stores timestamptz, which has no text to check.
func TestStoredTimesAreCanonical(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("PostgreSQL stores times as timestamptz, not text")
	}
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }))
	ctx := testutil.SystemContext(t)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer receiver.Close()
	admin, alice := env.Admin.Token, env.Alice.Token

	item := env.CreateItem(env.Alice, "timed")
	type req = testutil.Request
	for _, r := range []req{
		{Method: "PUT", Path: "/v1/items/" + item, Token: alice, Body: map[string]any{"name": "retimed"}},
		{Method: "POST", Path: "/v1/items", Token: alice, Body: map[string]any{"name": "keyed"}, Headers: map[string]string{"Idempotency-Key": "timed-1"}},
		{Method: "POST", Path: "/v1/keys", Token: alice, Body: map[string]any{"label": "expiring", "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339Nano)}},
		{Method: "POST", Path: "/v1/users", Token: admin, Body: map[string]any{"email": "carol@example.com", "name": "Carol"}},
		{Method: "PUT", Path: "/v1/users/" + env.Bob.UserID, Token: admin, Body: map[string]any{"name": "Robert"}},
		{Method: "DELETE", Path: "/v1/keys/" + env.Bob.KeyID, Token: admin},
		{Method: "POST", Path: "/v1/webhooks", Token: alice, Body: map[string]any{"url": receiver.URL}},
	} {
		if res := env.Do(r); res.Status >= 300 {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, res.Status, res.Body)
		}
	}
	var hooks []struct{ ID string }
	env.Do(req{Method: "GET", Path: "/v1/webhooks", Token: alice}).Data(t, &hooks)
	if res := env.Do(req{Method: "POST", Path: "/v1/webhooks/" + hooks[0].ID + "/rotate-secret", Token: alice}); res.Status != 200 {
		t.Fatalf("rotate: %d %s", res.Status, res.Body)
	}
	// The workers' tables, written through the same pool.
	client := env.App.DB.Client
	ev, err := client.Event.Query().Where(event.ItemID(item)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Event.UpdateOne(ev).SetDispatchedAt(time.Now()).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := client.Delivery.Create().SetEventID(ev.ID).SetEndpointID(hooks[0].ID).SetState(delivery.StatePending).
		SetNextAttemptAt(time.Now()).SetClaimedUntil(time.Now().Add(time.Minute)).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.DeliveryAttempt.Create().SetDelivery(d).SetNumber(1).SetDurationMs(3).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := client.WebhookEndpoint.UpdateOneID(hooks[0].ID).SetBackoffUntil(time.Now().In(time.FixedZone("CET", 3600))).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if res := env.Do(req{Method: "GET", Path: "/readyz"}); res.Status != 200 {
		t.Fatalf("readyz: %d %s", res.Status, res.Body)
	}

	db := env.App.DB.SQL
	cols := timeColumns(t, db)
	tables := map[string]int{}
	for _, col := range cols {
		table, _, _ := strings.Cut(col, ".")
		for _, s := range storedTimes(t, db, col) {
			tables[table]++
			if !canonicalTime.MatchString(s) {
				t.Errorf("%s holds %q, not RFC 3339 UTC with microseconds", col, s)
			}
		}
	}
	for _, col := range cols {
		if table, _, _ := strings.Cut(col, "."); tables[table] == 0 {
			t.Errorf("table %s has no time to check: the test no longer writes it", table)
		}
	}
}

// TestOldTimesMigrated: a database whose times were written as Go's
// time.String() (zones other than UTC, a monotonic suffix, nanoseconds) or
// as CURRENT_TIMESTAMP is rewritten on start: every stored time is
// canonical, the items list newest first in the order of their times (not
// of their old texts, which sorted otherwise), pages follow each other by
// cursor, and a cursor issued before the rewrite continues where it did.
func TestOldTimesMigrated(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("PostgreSQL stores times as timestamptz, not text")
	}
	ctx := context.Background()
	url := testutil.DatabaseURL(t)
	db, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	files, err := migration.Files(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for kept < len(files) && !strings.HasSuffix(files[kept].Name, "_canonical_times.sql") {
		kept++
	}
	if kept == len(files) {
		t.Fatal("no canonical_times migration")
	}
	if _, err := migration.ApplyFiles(ctx, db.SQL, db.Dialect, files[:kept]); err != nil {
		t.Fatal(err)
	}
	const owner = "user_01kbdrb3r00000000000000000"
	// Newest first by time: e, d, b, c, a; by the old texts: b, d, c, a, e.
	old := []struct{ id, at, want string }{
		{"item_01kbdrb3r00000000000000001", "2026-12-01 10:00:00.5 +0000 UTC", "2026-12-01T10:00:00.5Z"},
		{"item_01kbdrb3r00000000000000002", "2026-12-01 11:30:00 +0100 CET m=+86402.26", "2026-12-01T10:30:00Z"},
		{"item_01kbdrb3r00000000000000003", "2026-12-01 10:15:00.25 +0000 UTC m=+1.000000001", "2026-12-01T10:15:00.25Z"},
		{"item_01kbdrb3r00000000000000004", "2026-12-01 10:45:00", "2026-12-01T10:45:00Z"},
		{"item_01kbdrb3r00000000000000005", "2026-12-01 03:50:00.123456789 -0700 MST", "2026-12-01T10:50:00.123456Z"},
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO users (id, created_at, updated_at, email, name, role) VALUES (?, ?, ?, 'old@example.com', 'Old', 'user')`,
		owner, "2026-11-30 09:00:00.000001 +0000 UTC m=+0.5", "2026-11-30 09:00:00.000001 +0000 UTC m=+0.5"); err != nil {
		t.Fatal(err)
	}
	for _, it := range old {
		if _, err := db.SQL.ExecContext(ctx, `INSERT INTO items (id, created_at, updated_at, name, user_id) VALUES (?, ?, ?, ?, ?)`,
			it.id, it.at, it.at, it.id, owner); err != nil {
			t.Fatal(err)
		}
	}
	// The counters the server's hooks keep (lists count from them).
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO item_counts (user_id, status, count) SELECT user_id, status, COUNT(*) FROM items GROUP BY user_id, status`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.DatabaseURL = url }))
	for _, col := range timeColumns(t, env.App.DB.SQL) {
		for _, s := range storedTimes(t, env.App.DB.SQL, col) {
			if !canonicalTime.MatchString(s) {
				t.Errorf("%s holds %q after the migration", col, s)
			}
		}
	}

	type page struct {
		Data []struct {
			ID        string `json:"id"`
			CreatedAt string `json:"created_at"`
		} `json:"data"`
		Meta struct {
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	list := func(query string) page {
		t.Helper()
		res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?user_id=" + owner + "&limit=2" + query, Token: env.Admin.Token})
		if res.Status != 200 {
			t.Fatalf("list %s: %d %s", query, res.Status, res.Body)
		}
		var p page
		testutil.MustJSON(t, res.Body, &p)
		if len(p.Data) == 0 {
			t.Logf("list %s: %s", query, res.Body)
		}
		return p
	}
	at := map[string]string{}
	for _, it := range old {
		at[it.id] = it.want
	}
	var got []string
	for p, cursor := list(""), ""; ; p = list("&cursor=" + cursor) {
		for _, it := range p.Data {
			got = append(got, it.ID[len(it.ID)-1:])
			if it.CreatedAt != at[it.ID] {
				t.Errorf("%s created_at %s, want %s", it.ID, it.CreatedAt, at[it.ID])
			}
		}
		if p.Meta.Pagination.NextCursor == nil {
			break
		}
		cursor = *p.Meta.Pagination.NextCursor
	}
	if s := strings.Join(got, ""); s != "54231" {
		t.Errorf("newest first by cursor: %s, want 54231 (items e d b c a)", s)
	}
	// The next_cursor of the page ending at item 4 (10:45:00), as the server
	// issued it before the rewrite: a cursor names a time, not its text.
	const before = "hKFpv2l0ZW1fMDFrYmRyYjNyMDAwMDAwMDAwMDAwMDAwMDShdtb_aw6lLKFzqmNyZWF0ZWRfYXShZMM"
	got = got[:0]
	for _, it := range list("&cursor=" + before).Data {
		got = append(got, it.ID[len(it.ID)-1:])
	}
	if s := strings.Join(got, ""); s != "23" {
		t.Errorf("after a cursor from before: %s, want 23", s)
	}
}
