package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"
	"github.com/oklog/ulid/v2"
	_ "modernc.org/sqlite" // "sqlite"
)

// database is the benchmark's fresh database.
type database struct {
	dialect string // sqlite or postgres
	url     string // DATABASE_URL of the servers
	wal     string // SQLite: the write-ahead log's path
	path    string // SQLite: the database file
	open    func() (*sql.DB, error)
	drop    func()
}

// referenceURL is the DATABASE_URL of the reference, called after seeding.
// On SQLite it is a copy of the seeded file: two servers writing one file
// in turns would checkpoint each other's write-ahead log (each its own way),
// which blurs both the log's size and the write figures. PostgreSQL is
// shared as it would be.
func (d *database) referenceURL(work string) (string, error) {
	if d.dialect != "sqlite" {
		return d.url, nil
	}
	copyPath := filepath.Join(work, "reference.db")
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(d.path + suffix)
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue // checkpointed into the file when the seeding closed it
		}
		if err != nil {
			return "", fmt.Errorf("copy the seeded database: %w", err)
		}
		if err := os.WriteFile(copyPath+suffix, data, 0o644); err != nil {
			return "", fmt.Errorf("copy the seeded database: %w", err)
		}
	}
	return "sqlite:" + copyPath, nil
}

// newDatabase makes a fresh SQLite file in the work folder, or a fresh
// schema on the PostgreSQL server of BENCH_DATABASE_URL (dropped at the end).
func newDatabase(ctx context.Context, pgURL, work string) (*database, error) {
	if pgURL == "" {
		path := filepath.Join(work, "bench.db")
		return &database{
			dialect: "sqlite",
			url:     "sqlite:" + path,
			wal:     path + "-wal",
			path:    path,
			open: func() (*sql.DB, error) {
				return sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate")
			},
			drop: func() {},
		}, nil
	}
	admin, err := sql.Open("pgx", pgURL)
	if err != nil {
		return nil, fmt.Errorf("BENCH_DATABASE_URL: %w", err)
	}
	defer admin.Close()
	schema := "bench_" + strings.ToLower(ulid.Make().String())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, fmt.Errorf("BENCH_DATABASE_URL: create schema: %w", err)
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		return nil, fmt.Errorf("BENCH_DATABASE_URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dsn := u.String()
	return &database{
		dialect: "postgres",
		url:     dsn,
		open:    func() (*sql.DB, error) { return sql.Open("pgx", dsn) },
		drop: func() {
			if db, err := sql.Open("pgx", pgURL); err == nil {
				_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
				db.Close()
			}
		},
	}, nil
}

// fixture is what the load needs: each user's token and items.
type fixture struct {
	keys    []string
	userIDs []string
	tokens  []string
	items   [][]string // item ids per user

	// big is the user of the rows at scale, with bigItems items (none when
	// no such row runs).
	big      bigUser
	bigItems int

	// sizes is the sizes row's owner of many items (sizes.go), nil when
	// that row does not run.
	sizes *sizesUser
}

// bigUser is the one user of the rows at scale.
type bigUser struct {
	key, userID, token string
	// deepCursor starts the page fixture.deepPage, obtained from the API.
	deepCursor string
}

// seed migrates the database and creates the users and their keys with the
// server binary itself, then inserts the items directly in one transaction,
// in the form ent writes them; with scale > 0 also one more user with that
// many items, for the rows at scale.
//
// The items are written in SQL, past ent and its hooks: what the hooks keep
// beside the items (the per-owner counters) is filled by insertItems too.
func seed(ctx context.Context, server string, env []string, db *database, users, items, scale int, sizes bool) (*fixture, error) {
	runServer := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, server, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("server %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(stdout.String()), nil
	}
	if _, err := runServer("migrate"); err != nil {
		return nil, err
	}
	fx := &fixture{items: make([][]string, users)}
	for i := range users {
		key, err := runServer("keys", "create", "--email", fmt.Sprintf("bench%02d@example.com", i), "--name", fmt.Sprintf("Bench User %02d", i))
		if err != nil {
			return nil, err
		}
		fx.keys = append(fx.keys, key)
	}
	conn, err := db.open()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SELECT id FROM users WHERE email LIKE 'bench%' ORDER BY email")
	if err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		fx.userIDs = append(fx.userIDs, id)
	}
	rows.Close()
	if len(fx.userIDs) != users {
		return nil, fmt.Errorf("seeded %d users, found %d", users, len(fx.userIDs))
	}
	if err := insertItems(ctx, conn, db.dialect, fx.userIDs, items, "Item %05d", func(owner int, id string) {
		fx.items[owner] = append(fx.items[owner], id)
	}); err != nil {
		return nil, err
	}
	if scale > 0 {
		// Not "bench…": the query above finds the users of the other rows.
		if fx.big.key, err = runServer("keys", "create", "--email", "scale@example.com", "--name", "Scale User"); err != nil {
			return nil, err
		}
		if err := conn.QueryRowContext(ctx, "SELECT id FROM users WHERE email = 'scale@example.com'").Scan(&fx.big.userID); err != nil {
			return nil, fmt.Errorf("read the scale user: %w", err)
		}
		if err := insertItems(ctx, conn, db.dialect, []string{fx.big.userID}, scale, "Scale item %06d", func(int, string) {}); err != nil {
			return nil, err
		}
		fx.bigItems = scale
	}
	if sizes {
		if err := seedSizes(ctx, db, runServer, fx); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

// insertItems writes n items in batches of one transaction: ids made like
// the product's (prefix + lowercase ULID of the creation time), timestamps in
// UTC at microsecond precision (stored as the server's pool stores them), one item
// in ten archived, owners in turn, then the item counters; record learns each
// item's owner and id.
func insertItems(ctx context.Context, db *sql.DB, dialect string, owners []string, n int, nameFormat string, record func(owner int, id string)) error {
	const batch = 500 // 3,500 parameters: within SQLite's and PostgreSQL's limits
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now().UTC().Add(-time.Duration(n) * time.Second).Truncate(time.Microsecond)
	for done := 0; done < n; done += batch {
		size := min(batch, n-done)
		var sb strings.Builder
		sb.WriteString("INSERT INTO items (id, created_at, updated_at, name, description, status, user_id) VALUES ")
		args := make([]any, 0, size*7)
		for j := range size {
			i := done + j
			ts := start.Add(time.Duration(i)*time.Second + time.Duration(rng.IntN(1e6))*time.Microsecond)
			id := "item_" + strings.ToLower(ulid.MustNew(ulid.Timestamp(ts), ulid.DefaultEntropy()).String())
			status := "active"
			if i%10 == 9 {
				status = "archived"
			}
			owner := i % len(owners)
			record(owner, id)
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(")
			for c := range 7 {
				if c > 0 {
					sb.WriteString(", ")
				}
				if dialect == "postgres" {
					sb.WriteString("$" + strconv.Itoa(len(args)+c+1))
				} else {
					sb.WriteString("?")
				}
			}
			sb.WriteString(")")
			var at any = ts
			if dialect != "postgres" {
				// As the server's pool writes a time on SQLite
				// (internal/database/sqlitetime.go).
				at = ts.Format("2006-01-02T15:04:05.000000Z")
			}
			args = append(args, id, at, at, fmt.Sprintf(nameFormat, i),
				fmt.Sprintf("Seeded item %d of the benchmark, with a description of ordinary length.", i), status, owners[owner])
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("insert items: %w", err)
		}
	}
	// The item counters the server's hooks would have kept.
	if _, err := tx.ExecContext(ctx, countItemsSQL); err != nil {
		return fmt.Errorf("count items: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit items: %w", err)
	}
	return nil
}

// countItemsSQL fills the item counters from the items: what the server's
// hooks would have kept (the migration's backfill, on a database that has no
// items of its own).
const countItemsSQL = `INSERT INTO item_counts (user_id, status, count) ` +
	`SELECT user_id, status, COUNT(*) FROM items GROUP BY user_id, status ` +
	`ON CONFLICT (user_id, status, slot) DO UPDATE SET count = excluded.count`

// login exchanges each user's key for a token at the server (the reference
// verifies the same tokens with the same secret), and finds the cursor of
// the deep page of the rows at scale.
func (fx *fixture) login(ctx context.Context, base string) error {
	for _, key := range fx.keys {
		tok, err := loginKey(ctx, base, key)
		if err != nil {
			return err
		}
		fx.tokens = append(fx.tokens, tok)
	}
	if fx.big.key == "" {
		return nil
	}
	tok, err := loginKey(ctx, base, fx.big.key)
	if err != nil {
		return err
	}
	fx.big.token = tok
	return fx.findDeepCursor(ctx, base)
}

// findDeepCursor asks the server for the page before the deep page and keeps
// its next_cursor, which starts the deep page: the cursor a client walking
// the list would hold there. A server without cursors leaves it empty.
func (fx *fixture) findDeepCursor(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/items?limit=20&page=%d", base, fx.deepPage()-1), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+fx.big.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("deep page: %w", err)
	}
	defer res.Body.Close()
	var env struct {
		Meta struct {
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("deep page: status %d: %v", res.StatusCode, err)
	}
	if c := env.Meta.Pagination.NextCursor; c != nil {
		fx.big.deepCursor = *c
	}
	return nil
}

// loginKey exchanges an API key for a token.
func loginKey(ctx context.Context, base, key string) (string, error) {
	body, _ := json.Marshal(map[string]string{"api_key": key})
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("login: %w", err)
	}
	defer res.Body.Close()
	var env struct {
		Data struct {
			AccessToken string `json:"access_token"`
		} `json:"data"`
	}
	err = json.NewDecoder(res.Body).Decode(&env)
	if err != nil || res.StatusCode != http.StatusOK || env.Data.AccessToken == "" {
		return "", fmt.Errorf("login: status %d: %v", res.StatusCode, err)
	}
	return env.Data.AccessToken, nil
}
