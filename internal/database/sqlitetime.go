package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// SQLite has no time type: a time is whatever text the driver writes, and
// the driver writes Go's time.String() ("2026-12-02 00:57:12.394196 +0000
// UTC", with " m=+86402.26" when the value carries a monotonic reading, in
// the value's own zone). Such text does not sort as the times it names, so
// created_at < ? in a keyset page or a pruner compared unlike strings. The
// pool therefore opens SQLite through sqliteDriver, which hands the driver
// every time.Time argument as TimeLayout text instead: one form, in UTC, at
// PostgreSQL's precision (microseconds, truncated as pgx truncates), that
// sorts as the times do and that the driver reads back as a time (it parses
// RFC 3339 as well as the old form, so rows from before the canonical_times
// migration still read).

// TimeLayout is the one form of every time SQLite stores: RFC 3339 in UTC
// with exactly six fractional digits.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// FormatTime is t as SQLite stores it (TimeLayout).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// sqliteDriverName is the name sqliteDriver is registered under; the pool
// (and the tracing wrapper, which looks the driver up by name) opens it.
const sqliteDriverName = "sqlite-itemsvc"

func init() {
	// The driver modernc.org/sqlite registered: sql.Open connects to
	// nothing, it only finds the driver.
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err)
	}
	inner := db.Driver()
	db.Close()
	sql.Register(sqliteDriverName, sqliteDriver{inner})
}

// sqliteDriver opens the driver's connections wrapped in sqliteConn.
type sqliteDriver struct{ driver.Driver }

func (d sqliteDriver) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return sqliteConn{c}, nil
}

// sqliteConn is the driver's connection with CheckNamedValue, which
// database/sql asks about every argument of every statement (prepared
// ones included: the driver's statements have no checker of their own).
// The driver's connection implements every interface below; the wrapper
// passes them through.
type sqliteConn struct{ driver.Conn }

var (
	_ driver.NamedValueChecker  = sqliteConn{}
	_ driver.ConnBeginTx        = sqliteConn{}
	_ driver.ConnPrepareContext = sqliteConn{}
	_ driver.ExecerContext      = sqliteConn{}
	_ driver.QueryerContext     = sqliteConn{}
	_ driver.Pinger             = sqliteConn{}
	_ driver.SessionResetter    = sqliteConn{}
	_ driver.Validator          = sqliteConn{}
)

// CheckNamedValue writes a time as TimeLayout text; anything else goes on
// to database/sql's default conversion (ErrSkip).
func (c sqliteConn) CheckNamedValue(nv *driver.NamedValue) error {
	if t, ok := nv.Value.(time.Time); ok {
		nv.Value = FormatTime(t)
		return nil
	}
	return driver.ErrSkip
}

func (c sqliteConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c sqliteConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c sqliteConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c sqliteConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c sqliteConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c sqliteConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c sqliteConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }
