package apperr

import (
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

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
