//go:build ignore

// Command diff writes a new migration for each dialect from the difference
// between the ent schema and the existing migrations:
//
//	go run internal/migration/diff.go -name add_widgets
//
// SQLite replays the directory on an in-memory database; PostgreSQL on a
// scratch database created on the -dev-postgres server (default: the local
// one). A generated file may then be extended by hand (a data backfill);
//
//	go run internal/migration/diff.go -rehash
//
// rewrites both atlas.sum files to match.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/url"
	"strings"

	atlas "ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/acme/itemsvc/internal/migration/schematables"
)

func main() {
	name := flag.String("name", "", "name of the migration (snake_case)")
	pg := flag.String("dev-postgres", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server for the scratch database")
	rehash := flag.Bool("rehash", false, "only rewrite atlas.sum after a hand edit of a migration file")
	flag.Parse()
	if *rehash {
		for _, path := range []string{"internal/migration/sqlite", "internal/migration/postgres"} {
			if err := writeSum(path); err != nil {
				log.Fatalf("%s: %v", path, err)
			}
		}
		return
	}
	if *name == "" {
		log.Fatal("diff: -name is required")
	}
	ctx := context.Background()

	lite, err := sql.Open("sqlite", "file:dev?mode=memory&_pragma=foreign_keys(1)")
	if err != nil {
		log.Fatal(err)
	}
	lite.SetMaxOpenConns(1)
	if err := diff(ctx, lite, dialect.SQLite, "internal/migration/sqlite", *name); err != nil {
		log.Fatalf("sqlite: %v", err)
	}

	admin, err := sql.Open("pgx", *pg)
	if err != nil {
		log.Fatal(err)
	}
	const scratch = "itemsvc_migration_dev"
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+scratch); err != nil {
		log.Fatalf("postgres: %v", err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+scratch); err != nil {
		log.Fatalf("postgres: %v", err)
	}
	defer admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+scratch) //nolint:errcheck
	u, _ := url.Parse(*pg)
	u.Path = "/" + scratch
	dev, err := sql.Open("pgx", u.String())
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	if err := diff(ctx, dev, dialect.Postgres, "internal/migration/postgres", *name); err != nil {
		log.Fatalf("postgres: %v", err)
	}
}

func diff(ctx context.Context, db *sql.DB, dialectName, path, name string) error {
	dir, err := atlas.NewLocalDir(path)
	if err != nil {
		return err
	}
	m, err := schema.NewMigrate(entsql.OpenDB(dialectName, db),
		schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(dialectName),
		schema.WithFormatter(atlas.DefaultFormatter),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
	)
	if err != nil {
		return err
	}
	tables, err := schematables.Load("ent/schema")
	if err != nil {
		return err
	}
	if err := m.NamedDiff(ctx, strings.ToLower(name), tables...); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}

// writeSum rewrites the atlas.sum of a migration directory from its files.
func writeSum(path string) error {
	dir, err := atlas.NewLocalDir(path)
	if err != nil {
		return err
	}
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return atlas.WriteSumFile(dir, sum)
}
