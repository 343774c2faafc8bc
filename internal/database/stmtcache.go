package database

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// maxCachedStatements bounds the cache: ent writes a few dozen distinct
// queries; queries with variable IN lists beyond the bound simply run
// unprepared.
const maxCachedStatements = 256

// preparedReads is an ent driver whose queries outside transactions run as
// prepared statements, kept per query text. SQLite's driver prepares (parses
// and plans) every statement anew otherwise, which was a visible share of a
// get-by-id request's CPU (docs/development.md). database/sql prepares each statement once per
// pooled connection and reuses it. pgx already caches statements itself, so
// only SQLite uses this.
//
// Statements inside transactions use the same cache (preparedTx): a create
// runs five statements between BEGIN and COMMIT, and parsing them was a
// visible share of its CPU. There a statement seen for the first time runs
// unprepared and is prepared in the background for the next time, since
// preparing it on the spot would need a second connection from the pool
// while the transaction holds one (a pool of one, :memory:, has none).
type preparedReads struct {
	*entsql.Driver
	db      *sql.DB
	mu      sync.RWMutex
	stmts   map[string]*sql.Stmt // nil: does not prepare; runs unprepared
	pending map[string]bool      // being prepared in the background
	closed  bool
}

func newPreparedReads(drv *entsql.Driver, db *sql.DB) *preparedReads {
	return &preparedReads{Driver: drv, db: db, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
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
	if d.closed || len(d.stmts)+len(d.pending) >= maxCachedStatements {
		return nil, nil
	}
	st, err := d.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.stmts[query] = st
	return st, nil
}

// prepareTimeout bounds a background preparation, which waits for a free
// connection of the pool.
const prepareTimeout = 10 * time.Second

// txStmt returns the prepared statement of query for a transaction, or nil
// when it has none yet: the first use starts preparing it in the background.
func (d *preparedReads) txStmt(query string) *sql.Stmt {
	d.mu.RLock()
	st, ok := d.stmts[query]
	d.mu.RUnlock()
	if ok {
		return st
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stmts[query]; ok {
		return st
	}
	if d.closed || d.pending[query] || len(d.stmts)+len(d.pending) >= maxCachedStatements {
		return nil
	}
	d.pending[query] = true
	go d.prepareLater(query)
	return nil
}

// prepareLater prepares query for the cache. A statement that does not
// prepare is remembered as such and keeps running unprepared.
func (d *preparedReads) prepareLater(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
	defer cancel()
	st, err := d.db.PrepareContext(ctx, query)
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, query)
	switch {
	case d.closed:
		if err == nil {
			_ = st.Close()
		}
	case err == nil:
		d.stmts[query] = st
	case ctx.Err() == nil:
		d.stmts[query] = nil // the statement itself fails to prepare
	}
}

// Tx begins a transaction whose statements run as cached prepared
// statements.
func (d *preparedReads) Tx(ctx context.Context) (dialect.Tx, error) {
	return d.BeginTx(ctx, nil)
}

// BeginTx is Tx with options.
func (d *preparedReads) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	t, err := d.Driver.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	et, ok := t.(*entsql.Tx)
	if !ok {
		return t, nil
	}
	tx, ok := et.Tx.(*sql.Tx)
	if !ok {
		return t, nil
	}
	return &preparedTx{Tx: et, tx: tx, d: d}, nil
}

// preparedTx is a transaction whose statements run as the cache's prepared
// statements (database/sql's Tx.StmtContext reuses the one prepared on the
// transaction's connection), and unprepared until the cache has them.
//
// Its statements, its BEGIN and its COMMIT reach the driver with a context
// that cannot be cancelled (uncancelled): a request whose deadline has
// passed still fails at its next statement, but the one running finishes.
// Given a context that can end, database/sql starts a goroutine to watch
// each transaction and the SQLite driver one for each statement, and each
// such goroutine, started and woken on the request's goroutine, runs ahead
// of every goroutine the network woke. With the server on one CPU, the
// writes' goroutines so kept the scheduler's local queue busy that requests
// waiting to be read sat in its global queue, served one every 61 turns, in
// the order opposite to their arrival: the create row's tail was several
// times longer with them (docs/development.md, "SQLite's write path").
// A write transaction's statements are each one row or a small batch (the
// counters, the outbox, retention's batches) and run under the write gate,
// whose wait still ends with the context; reads outside transactions, which
// can scan, keep the driver's interrupt.
type preparedTx struct {
	*entsql.Tx
	tx *sql.Tx
	d  *preparedReads
}

// Exec implements dialect.Tx.
func (t *preparedTx) Exec(ctx context.Context, query string, args, v any) error {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return err
	}
	argv, ok := args.([]any)
	if !ok {
		return t.Tx.Exec(ctx, query, args, v)
	}
	switch v := v.(type) {
	case nil:
		_, err := t.ExecContext(ctx, query, argv...)
		return err
	case *sql.Result:
		res, err := t.ExecContext(ctx, query, argv...)
		if err != nil {
			return err
		}
		*v = res
		return nil
	default:
		return t.Tx.Exec(ctx, query, args, v) // which names the wrong type
	}
}

// Query implements dialect.Tx.
func (t *preparedTx) Query(ctx context.Context, query string, args, v any) error {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return err
	}
	rows, ok := v.(*entsql.Rows)
	argv, ok2 := args.([]any)
	if !ok || !ok2 {
		return t.Tx.Query(ctx, query, args, v)
	}
	r, err := t.QueryContext(ctx, query, argv...)
	if err != nil {
		return err
	}
	*rows = entsql.Rows{ColumnScanner: r}
	return nil
}

// ExecContext runs a statement in the transaction, prepared when the cache
// has it.
func (t *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if st := t.d.txStmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction, prepared when the cache has
// it.
func (t *preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if st := t.d.txStmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// uncancelled is ctx without its cancellation (preparedTx), or ctx's error
// if it has ended already.
func uncancelled(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// Close closes the statements, then the database.
func (d *preparedReads) Close() error {
	d.mu.Lock()
	for _, st := range d.stmts {
		if st != nil {
			_ = st.Close()
		}
	}
	d.stmts = map[string]*sql.Stmt{}
	d.closed = true
	d.mu.Unlock()
	return d.Driver.Close()
}
