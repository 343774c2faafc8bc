package apperr

import (
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// SQLite's primary result codes for a database that cannot take writes.
const (
	sqliteReadOnly = 8  // SQLITE_READONLY: the file or its folder is read-only
	sqliteIOErr    = 10 // SQLITE_IOERR: the disk failed a read or write
	sqliteFull     = 13 // SQLITE_FULL: the disk is full
)

// IsStorage reports whether err means the database cannot take writes: its
// disk is full or failing, or it is read-only (a read-only file, a
// PostgreSQL standby). The API answers 503 so that clients retry and load
// balancers look elsewhere; readiness reports it (database.DB.Ready).
func IsStorage(err error) bool {
	var sqliteErr *sqlite.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &sqliteErr):
		switch sqliteErr.Code() & 0xff {
		case sqliteReadOnly, sqliteIOErr, sqliteFull:
			return true
		}
	case errors.As(err, &pgErr):
		// Class 53: insufficient resources (53100 disk full); 25006:
		// read-only transaction (a standby, or default_transaction_read_only).
		return pgErr.Code[:2] == "53" || pgErr.Code == "25006"
	}
	return false
}

// isConnectionError reports whether err means the database could not be
// reached (as opposed to a query it refused), which the API answers with
// 503 so that clients and load balancers retry elsewhere.
func isConnectionError(err error) bool {
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	// database/sql's error for a closed pool is unexported; its text is stable.
	case strings.Contains(err.Error(), "sql: database is closed"),
		errors.Is(err, driver.ErrBadConn),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.As(err, &connectErr),
		errors.As(err, &netErr):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P01-57P03: the server is shutting
		// down or not yet accepting connections.
		return pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return false
}
