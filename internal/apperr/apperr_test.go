package apperr_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "modernc.org/sqlite" // the "sqlite" driver, for its real error values

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// secret is text a cause carries that must never reach a client.
const secret = "dsn=postgres://admin:hunter2@db"

// TestFrom: one row per kind of error the service meets, with the code,
// status, message and details the client gets. The ent and driver errors are
// real ones, from a real database, wrapped as the service wraps them.
func TestFrom(t *testing.T) {
	env := testutil.New(t)
	db := env.App.DB.Client
	allow := privacy.DecisionContext(context.Background(), privacy.Allow)
	alice := viewer.NewContext(context.Background(), viewer.Viewer{UserID: env.Alice.UserID, KeyID: env.Alice.KeyID, Role: viewer.RoleUser})
	wrap := func(err error) error { return fmt.Errorf("get item %s: %w", secret, err) }
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	const (
		unavailable = "service temporarily unavailable"
		internal    = "internal error"
		storage     = "the database cannot take writes right now; retry later"
		timeout     = "the request did not finish within its time limit; retry, or ask for less"
	)
	none := map[string]any{}
	cases := []struct {
		name string
		err  func(t *testing.T) error
		// ctx is the request's context, for FromRequest; nil: From alone.
		ctx     context.Context
		code    apperr.Code
		status  int
		message string
		details map[string]any
	}{
		{"an *Error passes through, wrapped or not", func(*testing.T) error { return wrap(apperr.Validation("name", "is required")) }, nil,
			apperr.CodeValidation, 400, "invalid name: is required", map[string]any{"field": "name", "reason": "is required"}},
		{"ent not found", func(t *testing.T) error {
			_, err := db.Item.Get(allow, "item_01jd0000000000000000000000")
			return wrap(err)
		}, nil, apperr.CodeNotFound, 404, "resource not found", none},
		{"ent not singular", func(t *testing.T) error {
			_, err := db.User.Query().Only(allow)
			return wrap(err)
		}, nil, apperr.CodeInternal, 500, internal, none},
		{"ent edge not loaded", func(t *testing.T) error {
			u, err := db.User.Get(allow, env.Alice.UserID)
			if err != nil {
				t.Fatal(err)
			}
			_, err = u.Edges.ItemsOrErr()
			return wrap(err)
		}, nil, apperr.CodeInternal, 500, internal, none},
		{"ent constraint (a second user with an email taken)", func(t *testing.T) error {
			_, err := db.User.Create().SetEmail("alice@example.com").SetName("Alice again").Save(allow)
			return wrap(err)
		}, nil, apperr.CodeInternal, 500, internal, none},
		{"ent validation", func(t *testing.T) error {
			_, err := db.User.Create().SetEmail("").SetName("Nobody").Save(allow)
			return wrap(err)
		}, nil, apperr.CodeValidation, 400, "invalid email: value is less than the required length",
			map[string]any{"field": "email", "reason": "value is less than the required length"}},
		{"privacy: a query with no viewer", func(t *testing.T) error {
			_, err := db.Item.Query().All(context.Background())
			return wrap(err)
		}, nil, apperr.CodePermissionDenied, 403, "permission denied", none},
		{"privacy: a user creating a user", func(t *testing.T) error {
			tx, err := db.Tx(alice)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			_, err = tx.User.Create().SetEmail("carol@example.com").SetName("Carol").Save(alice)
			return wrap(err)
		}, nil, apperr.CodePermissionDenied, 403, "permission denied", none},
		{"deadline of a query of its own", func(t *testing.T) error {
			_, err := db.Item.Query().All(privacy.DecisionContext(expired, privacy.Allow))
			return wrap(err)
		}, nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"the request's deadline passed, whatever the driver made of it", func(*testing.T) error { return wrap(errors.New("interrupted")) }, expired,
			apperr.CodeUnavailable, 503, timeout, map[string]any{"reason": "timeout"}},
		{"an *Error keeps its code past the request's deadline", func(*testing.T) error { return wrap(apperr.NotFound("item")) }, expired,
			apperr.CodeNotFound, 404, "item not found", none},
		{"cancelled (the client left)", func(t *testing.T) error {
			_, err := db.Item.Query().All(privacy.DecisionContext(cancelled, privacy.Allow))
			return wrap(err)
		}, cancelled, apperr.CodeUnavailable, 503, unavailable, none},
		{"database closed", func(t *testing.T) error {
			closed := openSQLite(t, "")
			closed.Close()
			_, err := closed.Exec("SELECT 1")
			return wrap(err)
		}, nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"bad connection", func(*testing.T) error { return wrap(driver.ErrBadConn) }, nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"connection refused", func(t *testing.T) error { return wrap(refused(t)) }, nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"connection reset", func(*testing.T) error { return wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}) }, nil,
			apperr.CodeUnavailable, 503, unavailable, none},
		{"PostgreSQL unreachable", func(t *testing.T) error {
			_, err := pgconn.Connect(context.Background(), "postgres://postgres@"+closedAddr(t)+"/x?connect_timeout=5")
			return wrap(err)
		}, nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"PostgreSQL connection lost (class 08)", pgErr("08006"), nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"PostgreSQL shutting down", pgErr("57P01"), nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"PostgreSQL starting up", pgErr("57P03"), nil, apperr.CodeUnavailable, 503, unavailable, none},
		{"PostgreSQL disk full (class 53)", pgErr("53100"), nil, apperr.CodeUnavailable, 503, storage, map[string]any{"reason": "storage"}},
		{"PostgreSQL read-only (a standby)", pgErr("25006"), nil, apperr.CodeUnavailable, 503, storage, map[string]any{"reason": "storage"}},
		{"PostgreSQL refusing a query (unique violation)", pgErr("23505"), nil, apperr.CodeInternal, 500, internal, none},
		{"SQLite read-only", func(t *testing.T) error {
			path := filepath.Join(t.TempDir(), "ro.db")
			if _, err := openSQLite(t, path).Exec("CREATE TABLE t (x)"); err != nil {
				t.Fatal(err)
			}
			_, err := openSQLite(t, "file:"+path+"?mode=ro").Exec("INSERT INTO t VALUES (1)")
			return wrap(err)
		}, nil, apperr.CodeUnavailable, 503, storage, map[string]any{"reason": "storage"}},
		{"SQLite full", func(t *testing.T) error {
			full := openSQLite(t, filepath.Join(t.TempDir(), "full.db"))
			full.SetMaxOpenConns(1) // the page limit holds per connection
			for _, q := range []string{"CREATE TABLE t (x)", "PRAGMA max_page_count = 2"} {
				if _, err := full.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, err := full.Exec("INSERT INTO t VALUES (?)", strings.Repeat("x", 64<<10))
			return wrap(err)
		}, nil, apperr.CodeUnavailable, 503, storage, map[string]any{"reason": "storage"}},
		{"unknown", func(*testing.T) error { return wrap(errors.New("boom")) }, nil, apperr.CodeInternal, 500, internal, none},
		{"unknown, within the request's time", func(*testing.T) error { return wrap(errors.New("boom")) }, context.Background(),
			apperr.CodeInternal, 500, internal, none},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err(t)
			if err == nil {
				t.Fatal("no error to map")
			}
			var e *apperr.Error
			if c.ctx != nil {
				e = apperr.FromRequest(c.ctx, err)
			} else {
				e = apperr.From(err)
			}
			if e.Code != c.code || e.Status() != c.status || e.Message != c.message {
				t.Fatalf("%s %d %q, want %s %d %q (from %v)", e.Code, e.Status(), e.Message, c.code, c.status, c.message, err)
			}
			if fmt.Sprint(e.Details) != fmt.Sprint(c.details) {
				t.Errorf("details %v, want %v", e.Details, c.details)
			}
			if strings.Contains(e.Message, secret) {
				t.Errorf("the message shows the cause: %q", e.Message)
			}
			if e.Code == apperr.CodeInternal || e.Code == apperr.CodeUnavailable {
				// For the log: the cause is kept.
				if !errors.Is(e, errors.Unwrap(err)) {
					t.Errorf("the cause is lost: %v", e)
				}
			}
		})
	}
	if apperr.From(nil) != nil || apperr.FromRequest(expired, nil) != nil {
		t.Error("no error must map to no error")
	}
}

// TestStatus: every code of the contract has its status; a code it does not
// know is a 500.
func TestStatus(t *testing.T) {
	cases := []struct {
		code   apperr.Code
		status int
	}{
		{apperr.CodeValidation, 400},
		{apperr.CodeInvalidAPIKey, 401},
		{apperr.CodeTokenExpired, 401},
		{apperr.CodeUnauthorized, 401},
		{apperr.CodePermissionDenied, 403},
		{apperr.CodeNotFound, 404},
		{apperr.CodeMethodNotAllowed, 405},
		{apperr.CodeIdempotencyKeyInUse, 409},
		{apperr.CodeCursorExpired, 410},
		{apperr.CodePreconditionFailed, 412},
		{apperr.CodePayloadTooLarge, 413},
		{apperr.CodeUnsupportedMedia, 415},
		{apperr.CodeIdempotencyKeyReused, 422},
		{apperr.CodeRateLimited, 429},
		{apperr.CodeInternal, 500},
		{apperr.CodeUnavailable, 503},
		{apperr.CodeSlowConsumer, 503},
		{"NOT_A_CODE", 500},
	}
	for _, c := range cases {
		if got := apperr.New(c.code, "m").Status(); got != c.status {
			t.Errorf("%s: status %d, want %d", c.code, got, c.status)
		}
	}
}

// openSQLite opens a SQLite database at dsn (a path, or "": in memory),
// closed when the test ends.
func openSQLite(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	if dsn == "" {
		dsn = ":memory:"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// refused is the error of a dial nobody answers.
func refused(t *testing.T) error {
	t.Helper()
	c, err := net.Dial("tcp", closedAddr(t))
	if err == nil {
		c.Close()
		t.Fatal("dialled a closed port")
	}
	return err
}

// pgErr is PostgreSQL's answer with SQLSTATE code, as pgx returns it.
func pgErr(code string) func(*testing.T) error {
	return func(*testing.T) error {
		return fmt.Errorf("query %s: %w", secret, &pgconn.PgError{Severity: "FATAL", Code: code, Message: "from the server"})
	}
}

// TestRenamed: an error about a field, named anew (as GraphQL names the
// service's fields), says the new name in its message and details and
// keeps its other details; one about no field stays as it is.
func TestRenamed(t *testing.T) {
	limited := apperr.Validation("user_id", "already has 5 active API keys")
	limited.Details["limit"] = 5
	for _, c := range []struct {
		name    string
		err     *apperr.Error
		to      string
		message string
		details map[string]any
	}{
		{"validation", limited, "userID", "invalid userID: already has 5 active API keys",
			map[string]any{"field": "userID", "reason": "already has 5 active API keys", "limit": 5}},
		{"precondition", apperr.PreconditionFailed("If-Match"), "ifMatch",
			"the item has changed since the version named by ifMatch; read it again, merge, and retry with its new ETag",
			map[string]any{"field": "ifMatch"}},
		{"cursor expired", apperr.CursorExpired("after", time.Hour), "since",
			"the event named by since is older than the event history kept (1h0m0s), so events after it may be gone: re-read the items, then follow the events from the newest one",
			map[string]any{"field": "since", "retention": "1h0m0s"}},
		{"no field", apperr.NotFound("item"), "x", "item not found", map[string]any{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := fmt.Sprint(c.err.Details)
			got := c.err.Renamed(c.to)
			if got.Code != c.err.Code || got.Message != c.message || fmt.Sprint(got.Details) != fmt.Sprint(c.details) {
				t.Errorf("got %s %q %v, want %q %v", got.Code, got.Message, got.Details, c.message, c.details)
			}
			if fmt.Sprint(c.err.Details) != before {
				t.Errorf("the original's details changed: %v, were %s", c.err.Details, before)
			}
		})
	}
}
