package rest_test

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// queryLog records every statement the ent client sends, inside
// transactions or not, so a test can count the round trips of a request.
type queryLog struct {
	dialect.Driver
	mu      sync.Mutex
	queries []string
	args    [][]any // of each query read outside a transaction, for EXPLAIN
}

func (d *queryLog) record(q string) {
	d.mu.Lock()
	d.queries = append(d.queries, q)
	d.mu.Unlock()
}

// take returns the statements recorded since the last take.
func (d *queryLog) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queries
	d.queries, d.args = nil, nil
	return q
}

func (d *queryLog) Exec(ctx context.Context, query string, args, v any) error {
	d.record(query)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d *queryLog) Query(ctx context.Context, query string, args, v any) error {
	d.record(query)
	a, _ := args.([]any)
	d.mu.Lock()
	d.args = append(d.args, a)
	d.mu.Unlock()
	return d.Driver.Query(ctx, query, args, v)
}

func (d *queryLog) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	d.record("BEGIN")
	return &txLog{Tx: tx, log: d}, nil
}

type txLog struct {
	dialect.Tx
	log *queryLog
}

func (t *txLog) Exec(ctx context.Context, query string, args, v any) error {
	t.log.record(query)
	return t.Tx.Exec(ctx, query, args, v)
}

func (t *txLog) Query(ctx context.Context, query string, args, v any) error {
	t.log.record(query)
	return t.Tx.Query(ctx, query, args, v)
}

// QueryContext records the statements ent has no builder for (the event
// seq's UPDATE … RETURNING).
func (t *txLog) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	t.log.record(query)
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	}).QueryContext(ctx, query, args...)
}

// ExecContext records the statements the item hooks write without ent's
// builders (an event, the counters).
func (t *txLog) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	t.log.record(query)
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	}).ExecContext(ctx, query, args...)
}

func (t *txLog) Commit() error {
	t.log.record("COMMIT")
	return t.Tx.Commit()
}

// newCountingEnv is testutil.New with the ent client over a query log: the
// real router, service and privacy rules on a real database.
func newCountingEnv(t *testing.T) (*testutil.Env, *queryLog) {
	t.Helper()
	ctx := context.Background()
	cfg := testutil.Config(t)
	db, err := database.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	d := dialect.SQLite
	if db.Dialect == "postgres" {
		d = dialect.Postgres
	}
	ql := &queryLog{Driver: entsql.OpenDB(d, db.SQL)}
	client := ent.NewClient(ent.Driver(ql))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(client, auth.NewTokens([]byte(strings.Repeat("s", 32)), time.Hour), service.Options{Logger: log})
	env := &testutil.Env{T: t, App: &app.App{Service: svc, Handler: rest.NewRouter(svc, rest.Options{Logger: log})}}
	env.Alice = env.NewActor("alice@example.com", "Alice", false)
	env.Admin = env.NewActor("admin@example.com", "Ada Admin", true)
	return env, ql
}

// TestQueryCounts holds each measured request to a fixed number of
// statements whatever the size of the page (no N+1), with a warm key cache.
func TestQueryCounts(t *testing.T) {
	env, ql := newCountingEnv(t)
	var id string
	for i := range 20 {
		id = env.CreateItem(env.Alice, fmt.Sprintf("item %d", i))
	}
	// An event's seq is one UPDATE … RETURNING of the counter on SQLite;
	// on PostgreSQL the INSERT of the event takes it from a sequence.
	seq := 1
	if testutil.OnPostgres() {
		seq = 0
	}
	cases := []struct {
		name    string
		req     testutil.Request
		status  int
		queries int
	}{
		{"list of 1", testutil.Request{Method: "GET", Path: "/v1/items?limit=1"}, 200, 2},
		{"list of 5", testutil.Request{Method: "GET", Path: "/v1/items?limit=5"}, 200, 2},
		{"list of 20", testutil.Request{Method: "GET", Path: "/v1/items?limit=20"}, 200, 2},
		{"admin list of 20", testutil.Request{Method: "GET", Path: "/v1/items?limit=20", Token: env.Admin.Token}, 200, 2},
		{"page past the end", testutil.Request{Method: "GET", Path: "/v1/items?page=9"}, 200, 1},
		{"get", testutil.Request{Method: "GET", Path: "/v1/items/" + id}, 200, 1},
		// The item, its event with its seq and its counter (one upsert),
		// in one transaction.
		{"create", testutil.Request{Method: "POST", Path: "/v1/items", Body: map[string]any{"name": "new"}}, 201, 5 + seq},
		{"update", testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Body: map[string]any{"name": "renamed"}}, 200, 6 + seq},
		// Plus the locked read of the old status and one upsert of both counters.
		{"status change", testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Body: map[string]any{"status": "archived"}}, 200, 8 + seq},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.req.Token == "" {
				c.req.Token = env.Alice.Token
			}
			ql.take()
			r := env.Do(c.req)
			if r.Status != c.status {
				t.Fatalf("status = %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if got := ql.take(); len(got) != c.queries {
				t.Errorf("%d statements, want %d:\n%s", len(got), c.queries, strings.Join(got, "\n"))
			} else if testing.Verbose() {
				t.Logf("statements:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}
