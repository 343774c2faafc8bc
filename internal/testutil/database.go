// Package testutil runs the real server in tests: a fresh database per test
// (SQLite by default, PostgreSQL when TEST_DATABASE_URL is set), users with
// keys and tokens, and a runner for tables of API scenarios.
package testutil

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
)

// DatabaseURL returns a DATABASE_URL for one test: a new SQLite file in the
// test's temporary folder, or, when TEST_DATABASE_URL names a PostgreSQL
// server, a new schema there, dropped when the test ends. With
// REQUIRE_POSTGRES=1 (CI) a missing or unreachable PostgreSQL fails the test
// instead of falling back.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatal("REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set")
		}
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	return postgresSchema(t, base)
}

// OnPostgres reports whether tests run against PostgreSQL.
func OnPostgres() bool { return os.Getenv("TEST_DATABASE_URL") != "" }

// postgresSchema creates an empty schema and returns a URL whose connections
// use it, so tests are isolated without the cost of a database each.
func postgresSchema(t testing.TB, base string) string {
	t.Helper()
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open TEST_DATABASE_URL: %v", err)
	}
	defer db.Close()
	schema := "t_" + strings.ToLower(ulid.Make().String())
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("TEST_DATABASE_URL: create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RedisURL returns TEST_REDIS_URL, skipping the test when it is unset
// outside CI, failing it in CI (REQUIRE_POSTGRES=1 implies all services).
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatal("REQUIRE_POSTGRES=1 but TEST_REDIS_URL is not set")
		}
		t.Skip("TEST_REDIS_URL not set")
	}
	return u
}
