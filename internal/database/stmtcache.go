package database

import (
	"context"
	"database/sql"
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// maxCachedStatements bounds the cache: ent writes a few dozen distinct
// queries; queries with variable IN lists beyond the bound simply run
// unprepared.
const maxCachedStatements = 256

// preparedReads is an ent driver whose queries outside transactions run as
// prepared statements, kept per query text. SQLite's driver prepares (parses
// and plans) every statement anew otherwise, which cost about a tenth of a
// get-by-id request's CPU. database/sql prepares each statement once per
// pooled connection and reuses it. pgx already caches statements itself, so
// only SQLite uses this.
type preparedReads struct {
	*entsql.Driver
	db    *sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newPreparedReads(drv *entsql.Driver, db *sql.DB) *preparedReads {
	return &preparedReads{Driver: drv, db: db, stmts: map[string]*sql.Stmt{}}
}

var _ dialect.Driver = (*preparedReads)(nil)

// Query runs query as a cached prepared statement.
func (d *preparedReads) Query(ctx context.Context, query string, args, v any) error {
	rows, ok := v.(*entsql.Rows)
	argv, ok2 := args.([]any)
	if !ok || !ok2 {
		return d.Driver.Query(ctx, query, args, v)
	}
	st, err := d.stmt(ctx, query)
	if err != nil {
		return err
	}
	if st == nil {
		return d.Driver.Query(ctx, query, args, v)
	}
	r, err := st.QueryContext(ctx, argv...)
	if err != nil {
		return err
	}
	*rows = entsql.Rows{ColumnScanner: r}
	return nil
}

// stmt returns the prepared statement of query, preparing it on first use;
// nil when the cache is full.
func (d *preparedReads) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	d.mu.RLock()
	st, ok := d.stmts[query]
	d.mu.RUnlock()
	if ok {
		return st, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	if len(d.stmts) >= maxCachedStatements {
		return nil, nil
	}
	st, err := d.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.stmts[query] = st
	return st, nil
}

// Close closes the statements, then the database.
func (d *preparedReads) Close() error {
	d.mu.Lock()
	for _, st := range d.stmts {
		_ = st.Close()
	}
	d.stmts = map[string]*sql.Stmt{}
	d.mu.Unlock()
	return d.Driver.Close()
}
