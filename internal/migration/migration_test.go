package migration_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/migration/schematables"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestApplyIsIdempotent: the first run applies every file, a second applies
// nothing and loses nothing.
func TestApplyIsIdempotent(t *testing.T) {
	ctx := context.Background()
	url := testutil.DatabaseURL(t)
	db, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.Migrate(ctx)
	if err != nil || n == 0 {
		t.Fatalf("first run applied %d, err %v; want every file", n, err)
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO settings (id, value, created_at, updated_at) VALUES ('probe', 'kept', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}

	again, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n, err := again.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("second run applied %d, err %v; want none", n, err)
	}
	var v string
	if err := again.SQL.QueryRowContext(ctx, `SELECT value FROM settings WHERE id = 'probe'`).Scan(&v); err != nil || v != "kept" {
		t.Fatalf("data lost across migrations: %q %v", v, err)
	}
}

// TestNoDrift: a database built by the migration files is exactly what the
// ent schema describes, so nobody can change a schema and forget
// `make migration`.
func TestNoDrift(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tables, err := schematables.Load("../../ent/schema")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	name := dialect.Postgres
	if db.Dialect == "sqlite" {
		name = dialect.SQLite
	}
	drv := &schema.WriteDriver{Writer: &buf, Driver: entsql.OpenDB(name, db.SQL)}
	m, err := schema.NewMigrate(drv, schema.WithDropColumn(true), schema.WithDropIndex(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, tables...); err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, line := range strings.Split(buf.String(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "BEGIN;" || line == "COMMIT;" || strings.HasPrefix(line, "--") {
			continue
		}
		if strings.Contains(line, "schema_revisions") {
			continue // the migration history table is ours, not ent's
		}
		changes = append(changes, line)
	}
	if len(changes) > 0 {
		t.Fatalf("the ent schema differs from the migrations; run `make migration NAME=…`:\n%s", strings.Join(changes, "\n"))
	}
}
