package database

import (
	"entgo.io/ent/dialect"

	"github.com/acme/itemsvc/ent"
)

// WrapDriver rebuilds the client over wrap(driver), so that a test can see
// every statement the server runs (the GraphQL N+1 test counts them). The
// pool stays the same; call it before the client is handed out.
func (d *DB) WrapDriver(wrap func(dialect.Driver) dialect.Driver) {
	d.driver = wrap(d.driver)
	d.Client = ent.NewClient(ent.Driver(d.driver))
}
