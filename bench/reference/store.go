package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"
	"github.com/oklog/ulid/v2"
	_ "modernc.org/sqlite" // "sqlite"
)

// store runs the SQL that ent emits for the product's measured requests
// (rest/queries_test.go prints it), on a pool opened like the product's.
type store struct {
	db      *sql.DB
	dialect string
	q       queries
}

// queries are the statements, with the dialect's placeholders.
type queries struct {
	keyState, countOwn, countAll, pageOwn, pageAll, getOwn, getAll string
	insertItem, insertEvent, updateItem, addCount                  string
	takeSeq                                                        string
}

const itemColumns = `id, created_at, updated_at, name, description, status, user_id`

func newQueries(dialect string) queries {
	q := queries{
		keyState: `SELECT api_keys.user_id, api_keys.revoked_at IS NOT NULL, users.role FROM api_keys JOIN users ON users.id = api_keys.user_id WHERE api_keys.id = ?`,
		countOwn: `SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM item_counts WHERE user_id = ?`,
		countAll: `SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM item_counts`,
		pageOwn:  `SELECT ` + itemColumns + ` FROM items WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		pageAll:  `SELECT ` + itemColumns + ` FROM items ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		getOwn:   `SELECT ` + itemColumns + ` FROM items WHERE id = ? AND user_id = ?`,
		getAll:   `SELECT ` + itemColumns + ` FROM items WHERE id = ?`,
		insertItem: `INSERT INTO items (created_at, updated_at, name, description, status, user_id, id) ` +
			`VALUES (?, ?, ?, ?, ?, ?, ?)`,
		insertEvent: `INSERT INTO events (created_at, updated_at, type, user_id, item_id, data, seq, id) ` +
			`VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		// The event's commit order on SQLite, as ent/schema/itemevents.go
		// takes it; PostgreSQL's insert takes it itself (below).
		takeSeq:    `UPDATE settings SET value = CAST(CAST(value AS bigint) + 1 AS text) WHERE id = 'event_seq' RETURNING value`,
		updateItem: `UPDATE items SET updated_at = ?, name = ?, description = ?, status = ? WHERE id = ?`,
		addCount: `INSERT INTO item_counts (count, status, user_id) VALUES (?, ?, ?) ` +
			`ON CONFLICT (user_id, status, slot) DO UPDATE SET count = item_counts.count + excluded.count`,
	}
	if dialect == "postgres" {
		for _, s := range []*string{&q.keyState, &q.countOwn, &q.countAll, &q.pageOwn, &q.pageAll, &q.getOwn, &q.getAll, &q.insertItem, &q.insertEvent, &q.updateItem, &q.addCount} {
			*s = dollarPlaceholders(*s)
		}
		// As ent/schema/itemevents.go writes it: the transaction's id and
		// a number from the sequence events_seq, no counter row.
		q.insertEvent = `INSERT INTO events (created_at, updated_at, type, user_id, item_id, data, xid, seq, id) ` +
			`VALUES ($1, $2, $3, $4, $5, $6, CAST(CAST(pg_current_xact_id() AS text) AS bigint), nextval('events_seq'), $7)`
		q.takeSeq = ""
	}
	return q
}

// dollarPlaceholders turns ? into $1, $2, … for PostgreSQL.
func dollarPlaceholders(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// openStore opens the database with the settings of a plain server: SQLite
// with the product's pragmas (WAL, immediate write transactions) and a pool
// of 8, PostgreSQL via pgx with a pool of 20. The pool stays fixed: it is the
// yardstick, and how the product sizes its own pool is part of what is
// measured.
func openStore(rawURL string) (*store, error) {
	var db *sql.DB
	var err error
	dialect := "postgres"
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		dialect = "sqlite"
		params := url.Values{}
		for _, p := range []string{"foreign_keys(1)", "journal_mode(WAL)", "busy_timeout(10000)", "synchronous(NORMAL)"} {
			params.Add("_pragma", p)
		}
		params.Set("_txlock", "immediate")
		db, err = sql.Open("sqlite", "file:"+strings.TrimPrefix(rawURL, "sqlite:")+"?"+params.Encode())
		if err == nil {
			db.SetMaxOpenConns(8)
			db.SetMaxIdleConns(8)
		}
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		db, err = sql.Open("pgx", rawURL)
		if err == nil {
			db.SetMaxOpenConns(20)
			db.SetMaxIdleConns(10)
		}
	default:
		return nil, fmt.Errorf("want sqlite:PATH or postgres://…")
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &store{db: db, dialect: dialect, q: newQueries(dialect)}, nil
}

// item is the row and the JSON of an item.
type item struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Status      string    `json:"status"`
	UserID      string    `json:"user_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type scanner interface{ Scan(...any) error }

func scanItem(s scanner) (item, error) {
	var it item
	err := s.Scan(&it.ID, &it.CreatedAt, &it.UpdatedAt, &it.Name, &it.Description, &it.Status, &it.UserID)
	it.CreatedAt, it.UpdatedAt = it.CreatedAt.UTC(), it.UpdatedAt.UTC()
	return it, err
}

// keyState reads what a token check needs to know of its API key.
func (s *store) keyState(ctx context.Context, keyID string) (userID, role string, revoked bool, err error) {
	err = s.db.QueryRowContext(ctx, s.q.keyState, keyID).Scan(&userID, &revoked, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", true, nil
	}
	return userID, role, revoked, err
}

// page reads the count of the items a viewer may see from the item counters
// and one page of them.
func (s *store) page(ctx context.Context, v viewer, limit, offset int) ([]item, int, error) {
	var total int
	var err error
	if v.admin {
		err = s.db.QueryRowContext(ctx, s.q.countAll).Scan(&total)
	} else {
		err = s.db.QueryRowContext(ctx, s.q.countOwn, v.userID).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count: %w", err)
	}
	items := []item{}
	if offset >= total {
		return items, total, nil
	}
	var rows *sql.Rows
	if v.admin {
		rows, err = s.db.QueryContext(ctx, s.q.pageAll, limit, offset)
	} else {
		rows, err = s.db.QueryContext(ctx, s.q.pageOwn, v.userID, limit, offset)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("page: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, it)
	}
	return items, total, rows.Err()
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// get reads an item the viewer may see; sql.ErrNoRows when there is none.
func (s *store) get(ctx context.Context, db queryRower, v viewer, id string) (item, error) {
	if v.admin {
		return scanItem(db.QueryRowContext(ctx, s.q.getAll, id))
	}
	return scanItem(db.QueryRowContext(ctx, s.q.getOwn, id, v.userID))
}

// now is the clock of stored timestamps, as the product's.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func newID(prefix string) string { return prefix + strings.ToLower(ulid.Make().String()) }

// create inserts an item, its item.created event and its count in one
// transaction.
func (s *store) create(ctx context.Context, v viewer, name, description string) (item, error) {
	t := now()
	it := item{ID: newID("item_"), Name: name, Description: description, Status: "active", UserID: v.userID, CreatedAt: t, UpdatedAt: t}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return item{}, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, s.q.insertItem, t, t, it.Name, it.Description, it.Status, it.UserID, it.ID); err != nil {
		return item{}, err
	}
	if err := s.event(ctx, tx, "item.created", it); err != nil {
		return item{}, err
	}
	if _, err := tx.ExecContext(ctx, s.q.addCount, 1, it.Status, it.UserID); err != nil {
		return item{}, err
	}
	return it, tx.Commit()
}

// update reads an item, changes the given fields and writes its
// item.updated event, in one transaction.
func (s *store) update(ctx context.Context, v viewer, id string, name, description *string) (item, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return item{}, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	it, err := s.get(ctx, tx, v, id)
	if err != nil {
		return item{}, err
	}
	changed := false
	if name != nil && *name != it.Name {
		it.Name, changed = *name, true
	}
	if description != nil && *description != it.Description {
		it.Description, changed = *description, true
	}
	if !changed {
		return it, tx.Commit()
	}
	it.UpdatedAt = now()
	if _, err := tx.ExecContext(ctx, s.q.updateItem, it.UpdatedAt, it.Name, it.Description, it.Status, it.ID); err != nil {
		return item{}, err
	}
	if err := s.event(ctx, tx, "item.updated", it); err != nil {
		return item{}, err
	}
	return it, tx.Commit()
}

// event writes the outbox row of an item change.
func (s *store) event(ctx context.Context, tx *sql.Tx, typ string, it item) error {
	data, err := json.Marshal(it)
	if err != nil {
		return err
	}
	t := now()
	if s.q.takeSeq == "" { // PostgreSQL
		_, err = tx.ExecContext(ctx, s.q.insertEvent, t, t, typ, it.UserID, it.ID, string(data), newID("evt_"))
		return err
	}
	var seq string
	if err := tx.QueryRowContext(ctx, s.q.takeSeq).Scan(&seq); err != nil {
		return err
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.q.insertEvent, t, t, typ, it.UserID, it.ID, string(data), n, newID("evt_"))
	return err
}
