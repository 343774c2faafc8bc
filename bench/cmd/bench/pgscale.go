package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/internal/auth"
)

// The pgscale row: the list, get, create and GraphQL list rows on
// PostgreSQL at -pg-items items of -pg-users users (1,000,000 of 10,000),
// each against the same row at pgScaleBaseItems items, measured in
// alternating turns on two servers, each with a schema of its own. Both
// schemas give every user the same number of items (100 by default: the
// base has 100 users), so that only the size of the tables differs between
// the two: a user's list, total and items are the same work in both. The
// users the load runs as (the first pgScaleSample) are the same rows in
// both schemas — ids, keys, items — so that one fixture drives both servers.
//
// The seed is SQL (COPY), not the API: a million creates through the API
// would take most of an hour; COPY takes seconds. It writes the rows as the
// server would (seedPGScale says how), and the run reports its time
// against pgScaleMaxSeed.
const (
	pgScaleBaseItems = 10_000
	pgScaleSample    = 64
	// pgScaleMaxRatio is the target: a row at scale within this factor of
	// the same row at the base (its req/s at least 1/pgScaleMaxRatio of it).
	pgScaleMaxRatio = 1.2
	pgScaleMaxSeed  = time.Minute
)

// pgScaleRows are the rows measured at both sizes: the harness's own
// requests (load.go), by name, under the names of this row.
var pgScaleRows = []struct{ name, row string }{
	{"pg-list", "list"},
	{"pg-get", "get"},
	{"pg-graphql", "graphql"},
	{"pg-create", "create"},
}

// pgScaleCase is one row at both sizes.
type pgScaleCase struct {
	Name, Title string
	Big, Base   measurement
	Skipped     string
}

// pgScaleResult is the row.
type pgScaleResult struct {
	Items, Users         int // at scale
	BaseItems, BaseUsers int
	Seed                 time.Duration // of the schema at scale
	Cases                []pgScaleCase
	Skipped              string
}

// pgScalePlan says what both schemas hold: user u of either has the same
// id, key and items (perUser, item j of user u made at start + j·round +
// u·pgScaleUserGap, so that the items of all users interleave in time as
// they would have been written).
type pgScalePlan struct {
	users, perUser int // at scale
	start          time.Time
	seed           uint64 // of the ids' random parts
	userIDs, keys  []string
	keyIDs         []string
}

// pgScaleUserGap separates the items of two users made in one round.
const pgScaleUserGap = 100 * time.Millisecond

func newPGScalePlan(users, perUser int) *pgScalePlan {
	p := &pgScalePlan{users: users, perUser: perUser, seed: uint64(time.Now().UnixNano())}
	p.start = time.Now().UTC().Add(-time.Duration(perUser) * p.round()).Truncate(time.Microsecond)
	for u := range users {
		at := p.start.Add(-time.Hour + time.Duration(u)*time.Millisecond)
		p.userIDs = append(p.userIDs, "user_"+p.ulid(at, 1, uint64(u)))
		p.keyIDs = append(p.keyIDs, "key_"+p.ulid(at, 2, uint64(u)))
		p.keys = append(p.keys, auth.NewKey(auth.LivePrefix))
	}
	return p
}

// round is the time between a user's items.
func (p *pgScalePlan) round() time.Duration { return time.Duration(p.users) * pgScaleUserGap }

// ulid is a lowercase ULID of at whose random part is a function of the
// plan's seed, kind and n: the same in both schemas.
func (p *pgScalePlan) ulid(at time.Time, kind, n uint64) string {
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at)) // within ULID's range until 10889
	var e [16]byte
	binary.BigEndian.PutUint64(e[:8], splitmix(p.seed^kind<<56^n))
	binary.BigEndian.PutUint64(e[8:], splitmix(p.seed^kind<<56^n^0x9e3779b97f4a7c15))
	_ = id.SetEntropy(e[:10])
	return strings.ToLower(id.String())
}

// item is item j of user u: its id and creation time (µs, as PostgreSQL
// keeps it).
func (p *pgScalePlan) item(u, j int) (string, time.Time) {
	n := uint64(u)<<32 | uint64(j)
	at := p.start.Add(time.Duration(j)*p.round() + time.Duration(u)*pgScaleUserGap +
		time.Duration(splitmix(p.seed^n)%uint64(pgScaleUserGap/time.Microsecond))*time.Microsecond)
	return "item_" + p.ulid(at, 3, n), at
}

// splitmix is SplitMix64's mixing step: a well-spread function of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// fixture is the load's view of the first pgScaleSample users, the same
// in both schemas; the tokens come from login.
func (p *pgScalePlan) fixture(sample int) *fixture {
	fx := &fixture{items: make([][]string, sample)}
	for u := range sample {
		fx.keys = append(fx.keys, p.keys[u])
		fx.userIDs = append(fx.userIDs, p.userIDs[u])
		for j := range p.perUser {
			id, _ := p.item(u, j)
			fx.items[u] = append(fx.items[u], id)
		}
	}
	return fx
}

// measurePGScale seeds the two schemas, starts a server on each and
// measures the rows in turns on both.
func measurePGScale(ctx context.Context, db *database, bin, work string, pin pinning, o options, progress func(string, ...any)) (pgScaleResult, error) {
	res := pgScaleResult{Items: o.pgItems, Users: o.pgUsers, BaseItems: pgScaleBaseItems}
	if db.dialect != "postgres" {
		res.Skipped = "needs PostgreSQL (BENCH_DATABASE_URL)"
		return res, nil
	}
	if o.pgUsers < 1 || o.pgItems%o.pgUsers != 0 || pgScaleBaseItems%(o.pgItems/o.pgUsers) != 0 || o.pgItems < pgScaleBaseItems {
		return res, fmt.Errorf("want -pg-items ≥ %d, a multiple of -pg-users, whose items per user divide %d", pgScaleBaseItems, pgScaleBaseItems)
	}
	perUser := o.pgItems / o.pgUsers
	res.BaseUsers = pgScaleBaseItems / perUser
	plan := newPGScalePlan(o.pgUsers, perUser)

	// The servers stop before their schemas are dropped: a DROP SCHEMA …
	// CASCADE beside a running server's background work can deadlock.
	var servers []*process
	var drops []func()
	defer func() {
		for _, s := range servers {
			s.stop()
		}
		for _, d := range drops {
			d()
		}
	}()
	for _, size := range []struct {
		name  string
		users int
	}{{"pgscale-1m", o.pgUsers}, {"pgscale-10k", res.BaseUsers}} {
		sdb, err := newDatabase(ctx, o.databaseURL, work)
		if err != nil {
			return res, err
		}
		if o.keep {
			progress("pgscale: keeping the schema at %d items: %s", size.users*perUser, sdb.url)
		} else {
			drops = append(drops, sdb.drop)
		}
		progress("pgscale: seeding %d users, %d items", size.users, size.users*perUser)
		t0 := time.Now()
		var steps []string
		step := func(name string, d time.Duration) {
			steps = append(steps, name+" "+d.Round(100*time.Millisecond).String())
		}
		if err := seedPGScale(ctx, bin, sdb, plan, size.users, step); err != nil {
			return res, fmt.Errorf("seed %s: %w", size.name, err)
		}
		took := time.Since(t0)
		progress("pgscale: seeded in %s (%s)", took.Round(100*time.Millisecond), strings.Join(steps, ", "))
		if size.users == o.pgUsers {
			res.Seed = took
		}
		srv, err := startProcess(ctx, size.name, pin.serverCPU, work, serverEnv(sdb.url), bin, "serve")
		if err != nil {
			return res, err
		}
		servers = append(servers, srv)
	}
	fx := plan.fixture(min(pgScaleSample, res.BaseUsers))
	if err := fx.login(ctx, servers[1].base); err != nil {
		return res, err
	}
	for _, pr := range pgScaleRows {
		r, err := selectRows([]string{pr.row})
		if err != nil {
			return res, err
		}
		c := pgScaleCase{Name: pr.name, Title: r[0].title}
		if note := r[0].skip(ctx, servers[1].base, fx); note != "" {
			c.Skipped = note
			progress("pgscale: %s: skipped: %s", pr.name, note)
			res.Cases = append(res.Cases, c)
			continue
		}
		progress("pgscale: %s: %s at %d items and at %d, in turns", pr.name, o.duration, res.Items, res.BaseItems)
		ms, err := measureRow(ctx, []contender{{p: servers[0], r: r[0]}, {p: servers[1], r: r[0]}}, fx, o, nil)
		if err != nil {
			return res, fmt.Errorf("pgscale: %s: %w", pr.name, err)
		}
		c.Big, c.Base = ms[0], ms[1]
		res.Cases = append(res.Cases, c)
	}
	return res, nil
}

// seedPGScale migrates db with the server binary and writes users of the
// plan into it, in one transaction of COPYs, as the server writes them:
// users (role user, enabled) each with one API key (its SHA-256 and display
// prefix as the service stores them, every scope, no expiry, the server's
// rate limits); perUser items each, one in ten archived, ids in the
// product's form (prefix and lowercase ULID of the creation time), written
// in time order as creates would have appended them; then the item
// counters from the items (slot 0, as the migration's backfill does).
//
// What makes a million rows take seconds, not minutes: the items' keys and
// indexes are dropped before their COPY and made again after it from their
// own definitions (pg_get_constraintdef, pg_indexes), so that each index is
// built in one sort and the foreign key checked in one join instead of a
// million insertions and lookups; and the table, truncated in
// the transaction, takes the COPY FREEZE, whose rows are written visible to
// all, so that no VACUUM has to visit them again (only ANALYZE, for the
// planner's statistics, which autovacuum would soon have taken). step
// reports each phase's time.
func seedPGScale(ctx context.Context, bin string, db *database, p *pgScalePlan, users int, step func(string, time.Duration)) error {
	t0 := time.Now()
	if _, err := runCommand(ctx, bin, serverEnv(db.url), "migrate"); err != nil {
		return err
	}
	step("migrate", time.Since(t0))
	sqlDB, err := db.open()
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	return fillPGScale(ctx, sqlDB, p, users, step)
}

// fillPGScale writes the first users of the plan into the migrated
// PostgreSQL database db, as seedPGScale says.
func fillPGScale(ctx context.Context, db *sql.DB, p *pgScalePlan, users int, step func(string, time.Duration)) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
		return copyPGScale(ctx, tx, p, users, step)
	})
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := conn.ExecContext(ctx, "ANALYZE users, api_keys, items, item_counts"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	step("analyze", time.Since(t0))
	return nil
}

// copyPGScale writes the rows in tx and commits it.
func copyPGScale(ctx context.Context, tx pgx.Tx, p *pgScalePlan, users int, step func(string, time.Duration)) error {
	t0 := time.Now()
	exec := func(q string) error {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
	if err := exec("SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
		return err
	}
	scopes := []byte(`["read","write"]`)
	copyRows := func(table string, cols []string, n int, row func(i int) []any) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) { return row(i), nil }))
		if err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		return nil
	}
	keyAt := func(u int) time.Time { return p.start.Add(-time.Hour + time.Duration(u)*time.Millisecond) }
	err := copyRows("users", []string{"id", "created_at", "updated_at", "email", "name", "role", "disabled"}, users, func(u int) []any {
		return []any{p.userIDs[u], keyAt(u), keyAt(u), fmt.Sprintf("pgscale%05d@example.com", u), fmt.Sprintf("Scale User %05d", u), "user", false}
	})
	if err != nil {
		return err
	}
	err = copyRows("api_keys", []string{"id", "created_at", "updated_at", "key_hash", "prefix", "user_id", "label", "scopes"}, users, func(u int) []any {
		return []any{p.keyIDs[u], keyAt(u), keyAt(u), auth.HashKey(p.keys[u]), auth.DisplayPrefix(p.keys[u]), p.userIDs[u], "", scopes}
	})
	if err != nil {
		return err
	}
	step("users and keys", time.Since(t0))

	t0 = time.Now()
	restore, err := dropItemIndexes(ctx, tx)
	if err != nil {
		return err
	}
	if err := exec("TRUNCATE items"); err != nil { // empty: what lets the COPY FREEZE
		return err
	}
	if err := copyItemsFrozen(ctx, tx, p, users); err != nil {
		return err
	}
	step("items", time.Since(t0))
	t0 = time.Now()
	for _, q := range restore {
		if err := exec(q); err != nil {
			return err
		}
	}
	step("indexes and key", time.Since(t0))
	t0 = time.Now()
	if err := exec(countItemsSQL); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	step("counters", time.Since(t0))
	return nil
}

// copyItemsFrozen writes the items of the plan's first users in COPY's text
// form (none of the values has a tab, newline or backslash to escape), in
// time order: round j, then user u, as creates would have appended them.
func copyItemsFrozen(ctx context.Context, tx pgx.Tx, p *pgScalePlan, users int) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		var line []byte
		for j := range p.perUser {
			status := "active"
			if j%10 == 9 {
				status = "archived"
			}
			for u := range users {
				id, at := p.item(u, j)
				ts := at.Format("2006-01-02 15:04:05.000000Z07:00")
				line = fmt.Appendf(line[:0], "%s\t%s\t%s\tItem %03d of user %05d\tSeeded item %d of the benchmark, with a description of ordinary length.\t%s\t%s\n",
					id, ts, ts, j, u, j, status, p.userIDs[u])
				if _, err := w.Write(line); err != nil {
					return // the reader failed; its error is CopyFrom's
				}
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	_, err := tx.Conn().PgConn().CopyFrom(ctx, pr,
		"COPY items (id, created_at, updated_at, name, description, status, user_id) FROM STDIN WITH (FREEZE)")
	pr.Close()
	if err != nil {
		return fmt.Errorf("copy items: %w", err)
	}
	return nil
}

// dropItemIndexes drops the items' indexes, primary key and foreign key,
// and returns the statements that make them again, in that order (the key
// check reads none of the items' indexes).
func dropItemIndexes(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var drops, indexes, keys []string
	collect := func(q string, scan func(a, b string)) error {
		rows, err := tx.Query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				return err
			}
			scan(a, b)
		}
		return rows.Err()
	}
	// The foreign key first, then the primary key, then the other indexes
	// (a constraint's own index goes with it).
	err := collect(`SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'items'::regclass AND contype IN ('f', 'p') ORDER BY contype`, func(name, def string) {
		drops = append(drops, "ALTER TABLE items DROP CONSTRAINT "+pgx.Identifier{name}.Sanitize())
		keys = append([]string{"ALTER TABLE items ADD CONSTRAINT " + pgx.Identifier{name}.Sanitize() + " " + def}, keys...)
	})
	if err != nil {
		return nil, err
	}
	err = collect(`SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'items'
		AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'items'::regclass)`, func(name, def string) {
		drops = append(drops, "DROP INDEX "+pgx.Identifier{name}.Sanitize())
		indexes = append(indexes, def)
	})
	if err != nil {
		return nil, err
	}
	if len(indexes) == 0 || len(keys) != 2 {
		return nil, errors.New("the items table lacks its indexes or keys: not migrated?")
	}
	for _, q := range drops {
		if _, err := tx.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return append(indexes, keys...), nil
}

// verdict judges a case: at scale within pgScaleMaxRatio of the base.
func (c pgScaleCase) verdict() string {
	if c.Big.Errors+c.Base.Errors > 0 || c.Base.RPS == 0 || c.Big.RPS*pgScaleMaxRatio < c.Base.RPS {
		return "MISSED"
	}
	return "ok"
}

// print writes the row; markdown makes it a list.
func (r pgScaleResult) print(w io.Writer, markdown bool) {
	p := "pgscale: "
	if markdown {
		p = "- pgscale: "
	}
	if r.Skipped != "" {
		fmt.Fprintf(w, "%sskipped: %s\n", p, r.Skipped)
		return
	}
	fmt.Fprintf(w, "%sPostgreSQL at %d items of %d users against %d items of %d users (%d items each); seeded by COPY in %s (target < %s): %s\n",
		p, r.Items, r.Users, r.BaseItems, r.BaseUsers, r.Items/max(1, r.Users), r.Seed.Round(100*time.Millisecond), pgScaleMaxSeed, verdict(r.Seed < pgScaleMaxSeed))
	for _, c := range r.Cases {
		if c.Skipped != "" {
			fmt.Fprintf(w, "%s%s: %s: skipped: %s\n", p, c.Name, c.Title, c.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s%s: %s: %d items %.0f/s (p50 %s, p99 %s ms, CPU %s µs/req), %d items %.0f/s (p50 %s, p99 %s ms, CPU %s µs/req) = %s× (p50 %s×, CPU %s×; target ≥ %.3f×, within %.1f×), errors %d/%d: %s\n",
			p, c.Name, c.Title,
			r.Items, c.Big.RPS, ms(c.Big.P50), ms(c.Big.P99), micros(c.Big.CPUPerReq),
			r.BaseItems, c.Base.RPS, ms(c.Base.P50), ms(c.Base.P99), micros(c.Base.CPUPerReq),
			throughputRatio(c.Big.RPS, c.Base.RPS), ratio(float64(c.Big.P50), float64(c.Base.P50)), ratio(c.Big.CPUPerReq, c.Base.CPUPerReq),
			1/pgScaleMaxRatio, pgScaleMaxRatio, c.Big.Errors, c.Base.Errors, c.verdict())
	}
	for _, c := range r.Cases {
		for _, m := range []measurement{c.Big, c.Base} {
			if m.FirstError != "" {
				fmt.Fprintf(w, "%s%s: first error: %s\n", p, c.Name, m.FirstError)
			}
		}
	}
}
