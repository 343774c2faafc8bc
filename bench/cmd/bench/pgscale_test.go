package main

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestPGScaleSeed: the rows the pgscale row writes by COPY are rows the
// server takes as its own, through the real router on PostgreSQL: the
// plan's keys log in, a user's list is their items newest first with the
// counted total, an item reads by its id, and a create moves the counters
// the seed filled.
func TestPGScaleSeed(t *testing.T) {
	if !testutil.OnPostgres() {
		t.Skip("the pgscale row seeds PostgreSQL only (TEST_DATABASE_URL)")
	}
	var dbURL string
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { dbURL = c.DatabaseURL }))
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The items' indexes and keys, which the fill drops and makes again.
	shape := func() []string {
		t.Helper()
		rows, err := db.Query(`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'items'
			UNION ALL SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'items'::regclass
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		return out
	}
	before := shape()
	const users, perUser = 7, 12
	plan := newPGScalePlan(users, perUser)
	if err := fillPGScale(context.Background(), db, plan, users, func(string, time.Duration) {}); err != nil {
		t.Fatalf("fill: %v", err)
	}
	if after := shape(); !slices.Equal(after, before) || len(before) < 8 {
		t.Fatalf("the items' indexes and keys after the fill:\n%v\nwant those of the migration:\n%v", after, before)
	}
	for u := range users {
		for _, id := range []string{plan.userIDs[u], plan.keyIDs[u]} {
			if !pulid.Valid(id[:len(id)-26], id) {
				t.Fatalf("id %q is not in the product's form", id)
			}
		}
	}

	fx := plan.fixture(3)
	login := env.Do(testutil.Request{Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"api_key": fx.keys[2]}})
	if login.Status != http.StatusOK {
		t.Fatalf("login with a seeded key: %d %s", login.Status, login.Body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	login.Data(t, &tok)

	type list struct {
		Data []struct{ ID string } `json:"data"`
		Meta struct {
			Pagination struct{ Total int } `json:"pagination"`
		} `json:"meta"`
	}
	readList := func() list {
		t.Helper()
		res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?limit=100", Token: tok.AccessToken})
		if res.Status != http.StatusOK {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		var l list
		testutil.MustJSON(t, res.Body, &l)
		return l
	}
	l := readList()
	want := slices.Clone(fx.items[2])
	slices.Reverse(want) // newest first
	var got []string
	for _, it := range l.Data {
		got = append(got, it.ID)
	}
	if !slices.Equal(got, want) || l.Meta.Pagination.Total != perUser {
		t.Fatalf("list of a seeded user: total %d, ids %v; want %d, %v", l.Meta.Pagination.Total, got, perUser, want)
	}
	for _, id := range want {
		if !pulid.Valid("item_", id) {
			t.Fatalf("item id %q is not in the product's form", id)
		}
	}
	if res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + want[3], Token: tok.AccessToken}); res.Status != http.StatusOK {
		t.Fatalf("get a seeded item: %d %s", res.Status, res.Body)
	}
	if res := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: tok.AccessToken, Body: map[string]string{"name": "after the seed"}}); res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	if l := readList(); l.Meta.Pagination.Total != perUser+1 {
		t.Fatalf("total after a create: %d, want %d", l.Meta.Pagination.Total, perUser+1)
	}

	// Every counter agrees with the items, archived ones included.
	var wrong int
	err = db.QueryRow(`SELECT count(*) FROM (SELECT user_id, status, count(*) AS n FROM items GROUP BY 1, 2) i
		FULL JOIN (SELECT user_id, status, sum(count) AS n FROM item_counts GROUP BY 1, 2) c USING (user_id, status)
		WHERE i.n IS DISTINCT FROM c.n`).Scan(&wrong)
	if err != nil || wrong != 0 {
		t.Fatalf("counters that disagree with the items: %d (%v)", wrong, err)
	}
	var archived int
	if err := db.QueryRow(`SELECT count(*) FROM items WHERE status = 'archived'`).Scan(&archived); err != nil || archived != users*(perUser/10) {
		t.Fatalf("archived items: %d (%v)", archived, err)
	}
}

// TestPGScaleHeadline: a recorded pgscale row sums up in the history line
// as each case's ratio to the base, its misses marked, and a run with the
// row belongs to a set that names it.
func TestPGScaleHeadline(t *testing.T) {
	r := pgScaleResult{Items: 1_000_000, Users: 10_000, BaseItems: 10_000, BaseUsers: 100, Seed: 40 * time.Second, Cases: []pgScaleCase{
		{Name: "pg-list", Title: "GET /v1/items?limit=20", Big: measurement{RPS: 950}, Base: measurement{RPS: 1000}},
		{Name: "pg-get", Title: "GET /v1/items/{id}", Big: measurement{RPS: 700}, Base: measurement{RPS: 1000}},
		{Name: "pg-graphql", Title: "POST /graphql", Skipped: "no GraphQL"},
	}}
	var b strings.Builder
	r.print(&b, true)
	run := recordedRun{heading: "Run 2026-12-02 08:00 UTC, commit 1a2b3c4", body: append([]string{"- database: postgres, 10 users, 10000 items"}, strings.Split(strings.TrimSpace(b.String()), "\n")...)}
	if got, want := run.headline(), "pg-list 0.950 × 10k, pg-get 0.700 × 10k (MISS)"; got != want {
		t.Errorf("headline = %q, want %q\n%s", got, want, b.String())
	}
	if got, want := run.set(), "postgres: pgscale"; got != want {
		t.Errorf("set = %q, want %q", got, want)
	}
}
