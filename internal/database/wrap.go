package database

import (
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
)

// WrapDriver rebuilds the client over wrap(driver), so that a test can see
// every statement the server runs (the GraphQL N+1 test counts them). The
// pool stays the same; call it before the client is handed out.
func (d *DB) WrapDriver(wrap func(dialect.Driver) dialect.Driver) {
	name := dialect.Postgres
	if d.Dialect == "sqlite" {
		name = dialect.SQLite
	}
	d.Client = ent.NewClient(ent.Driver(wrap(entsql.OpenDB(name, d.SQL))))
}
