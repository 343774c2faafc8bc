package rest_test

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"strings"
	"testing"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestFirstPagePlans holds the statements of a list's first page to plans
// whose cost does not grow with the owner's items: the page is one range of
// an index in the list's order (no scan of the table, no sort), and the
// total reads the owner's counters through their index (item_counts), never
// the items. The sizes row of make bench times it (an owner of 20,000
// items against one of 1,000).
func TestFirstPagePlans(t *testing.T) {
	env, ql := newCountingEnv(t)
	for i := range 30 {
		env.CreateItem(env.Alice, fmt.Sprintf("item %d", i))
	}
	db := ql.Driver.(*entsql.Driver).DB()
	ctx := context.Background()
	for _, path := range []string{
		"/v1/items?limit=20",
		"/v1/items?limit=20&status=active",
		"/v1/items?limit=20&sort=name&order=asc",
		"/v1/items?limit=20&sort=updated_at",
	} {
		t.Run(path, func(t *testing.T) {
			env.Do(testutil.Request{Method: "GET", Path: path, Token: env.Alice.Token}) // the key cache warm
			ql.take()
			if r := env.Do(testutil.Request{Method: "GET", Path: path, Token: env.Alice.Token}); r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			ql.mu.Lock()
			queries, args := ql.queries, ql.args
			ql.mu.Unlock()
			if len(queries) != 2 || len(args) != 2 {
				t.Fatalf("want the total and the page, two reads; got %d statements:\n%s", len(queries), strings.Join(queries, "\n"))
			}
			for i, q := range queries {
				plan := explain(t, ctx, db, q, args[i])
				t.Logf("%s\n%s", q, plan)
				for _, bad := range []string{"SCAN items", "SCAN item_counts", "TEMP B-TREE", "Seq Scan", "Sort"} {
					if strings.Contains(plan, bad) {
						t.Errorf("%s\nplan:\n%s\nwant no %q: its cost grows with the owner's items", q, plan, bad)
					}
				}
			}
		})
	}
}

// explain returns the plan of q: EXPLAIN QUERY PLAN on SQLite; on
// PostgreSQL EXPLAIN with sequential scans and sorts priced out, since on a
// test's few rows they would win anyway: what is left says whether an index
// serves the statement.
func explain(t *testing.T, ctx context.Context, db *stdsql.DB, q string, args []any) string {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prefix := "EXPLAIN QUERY PLAN "
	if testutil.OnPostgres() {
		prefix = "EXPLAIN "
		if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "SET enable_sort = off"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(ctx, "RESET ALL") //nolint:errcheck // the connection goes back to the pool either way
	}
	rows, err := conn.QueryContext(ctx, prefix+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprint(vals[len(vals)-1])) // the plan's text is the last column
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
