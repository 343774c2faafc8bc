package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// noRateLimit lifts the rate limits for tests that walk many pages.
var noRateLimit = testutil.WithConfig(func(c *config.Config) {
	c.RateLimitPerMinute, c.RateLimitPerHour = 1<<30, 1<<30
})

// cursorPage is a list response with what cursor paging adds.
type cursorPage struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	Meta struct {
		Pagination struct {
			Page       *int    `json:"page"`
			Limit      int     `json:"limit"`
			Total      int     `json:"total"`
			Pages      int     `json:"pages"`
			NextCursor *string `json:"next_cursor"`
		} `json:"pagination"`
	} `json:"meta"`
}

func getCursorPage(t *testing.T, env *testutil.Env, token, q string) cursorPage {
	t.Helper()
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items" + q, Token: token})
	if r.Status != 200 {
		t.Fatalf("GET /v1/items%s: %d %s", q, r.Status, r.Body)
	}
	if !bytes.Contains(r.Body, []byte(`"next_cursor":`)) {
		t.Fatalf("GET /v1/items%s: no next_cursor in %s", q, r.Body)
	}
	var p cursorPage
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p cursorPage) ids() []string {
	out := make([]string, len(p.Data))
	for i, d := range p.Data {
		out[i] = d.ID
	}
	return out
}

// tieItems gives Alice 11 items, those at the archived positions archived,
// whose names, created_at and updated_at repeat in groups, so that every sort
// has ties only the id breaks; and Bob two items that never show in hers.
func tieItems(t *testing.T, env *testutil.Env, archived ...int) []string {
	t.Helper()
	var alice []string
	for i := range 11 {
		alice = append(alice, env.CreateItem(env.Alice, fmt.Sprintf("name %d", i%3)))
	}
	for _, i := range archived {
		r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + alice[i], Token: env.Alice.Token, Body: map[string]any{"status": "archived"}})
		testutil.Scenario{Status: 200}.Assert(t, r)
	}
	env.CreateItem(env.Bob, "name 0")
	env.CreateItem(env.Bob, "name 1")
	// Timestamps cannot be chosen through the API; set them in the database.
	q := "UPDATE items SET created_at = ?, updated_at = ? WHERE id = ?"
	if env.App.DB.Dialect == "postgres" {
		q = "UPDATE items SET created_at = $1, updated_at = $2 WHERE id = $3"
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	for i, id := range alice {
		created := base.Add(time.Duration(i/4) * time.Second)      // groups of 4
		updated := base.Add(time.Duration(i%2) * time.Millisecond) // two groups
		if _, err := env.App.DB.SQL.ExecContext(context.Background(), q, created, updated, id); err != nil {
			t.Fatalf("set timestamps: %v", err)
		}
	}
	return alice
}

// TestCursorPaging: walking a list by cursor, for every sort and order with
// ties and with filters, yields exactly the pages that page numbers give.
func TestCursorPaging(t *testing.T) {
	env := testutil.New(t, noRateLimit)
	tieItems(t, env, 1, 4, 5, 9)

	type walk struct {
		name   string
		token  string
		filter string // extra query parameters
		limit  int
		want   int // items in the list
	}
	walks := []walk{
		{"alice, limit 3", env.Alice.Token, "", 3, 11},
		{"alice, limit 4 (pages end on a group)", env.Alice.Token, "", 4, 11},
		{"alice, limit 1", env.Alice.Token, "", 1, 11},
		{"alice, limit 11 (one full page)", env.Alice.Token, "", 11, 11},
		{"alice, limit 100", env.Alice.Token, "", 100, 11},
		{"alice, status=active", env.Alice.Token, "&status=active", 2, 7},
		{"alice, status=archived", env.Alice.Token, "&status=archived", 3, 4},
		{"admin, everyone's", env.Admin.Token, "", 4, 13},
		{"admin, user_id=alice", env.Admin.Token, "&user_id=" + env.Alice.UserID, 5, 11},
		{"admin, user_id=bob", env.Admin.Token, "&user_id=" + env.Bob.UserID, 1, 2},
	}
	for _, w := range walks {
		for _, sort := range []string{"created_at", "updated_at", "name"} {
			for _, order := range []string{"asc", "desc"} {
				t.Run(fmt.Sprintf("%s/%s %s", w.name, sort, order), func(t *testing.T) {
					q := fmt.Sprintf("?limit=%d&sort=%s&order=%s%s", w.limit, sort, order, w.filter)
					pages := (w.want + w.limit - 1) / w.limit
					var byCursor, byPage []string
					cursor := ""
					for n := 1; ; n++ {
						cq := q
						if cursor != "" {
							cq += "&cursor=" + url.QueryEscape(cursor)
						}
						cp := getCursorPage(t, env, w.token, cq)
						op := getCursorPage(t, env, w.token, fmt.Sprintf("%s&page=%d", q, n))
						if !slices.Equal(cp.ids(), op.ids()) {
							t.Fatalf("page %d: by cursor %v, by number %v", n, cp.ids(), op.ids())
						}
						pg := cp.Meta.Pagination
						if pg.Total != w.want || pg.Pages != pages || pg.Limit != w.limit {
							t.Fatalf("page %d: pagination %+v, want total %d, pages %d", n, pg, w.want, pages)
						}
						switch {
						case cursor == "" && (pg.Page == nil || *pg.Page != 1):
							t.Fatalf("first page: page = %v, want 1", pg.Page)
						case cursor != "" && pg.Page != nil:
							t.Fatalf("page %d by cursor: page = %d, want it absent", n, *pg.Page)
						}
						if (op.Meta.Pagination.NextCursor == nil) != (pg.NextCursor == nil) {
							t.Fatalf("page %d: next_cursor by number %v, by cursor %v", n, op.Meta.Pagination.NextCursor, pg.NextCursor)
						}
						byCursor = append(byCursor, cp.ids()...)
						byPage = append(byPage, op.ids()...)
						if pg.NextCursor == nil {
							if n != pages {
								t.Fatalf("next_cursor null on page %d of %d", n, pages)
							}
							break
						}
						if n >= pages {
							t.Fatalf("page %d of %d still has a next_cursor", n, pages)
						}
						cursor = *pg.NextCursor
					}
					if len(byCursor) != w.want || !slices.Equal(byCursor, byPage) {
						t.Fatalf("by cursor %v, by number %v; want %d items", byCursor, byPage, w.want)
					}
					if distinct := slices.Compact(slices.Sorted(slices.Values(byCursor))); len(distinct) != w.want {
						t.Fatalf("items repeat: %v", byCursor)
					}
				})
			}
		}
	}
}

// TestCursorSurvivesChanges: the cursor is a position, not an item: deleting
// the item it names, or adding items before it, neither repeats nor skips.
func TestCursorSurvivesChanges(t *testing.T) {
	env := testutil.New(t)
	var created []string
	for i := range 6 {
		created = append(created, env.CreateItem(env.Alice, fmt.Sprintf("item %d", i)))
	}
	first := getCursorPage(t, env, env.Alice.Token, "?limit=2&sort=name&order=asc")
	if got := first.ids(); !slices.Equal(got, created[:2]) {
		t.Fatalf("first page %v, want %v", got, created[:2])
	}
	// The item the cursor names goes, and a new one sorts before it.
	r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + created[1], Token: env.Alice.Token})
	testutil.Scenario{Status: 200}.Assert(t, r)
	env.CreateItem(env.Alice, "a first")
	next := getCursorPage(t, env, env.Alice.Token, "?limit=2&sort=name&order=asc&cursor="+*first.Meta.Pagination.NextCursor)
	if got := next.ids(); !slices.Equal(got, created[2:4]) {
		t.Fatalf("page after the cursor %v, want %v", got, created[2:4])
	}
}

// forge encodes a cursor-shaped value as the API would.
func forge(t *testing.T, v any) string {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestBadCursors: anything but a cursor of the same order is a
// VALIDATION_ERROR on cursor, never a 500.
func TestBadCursors(t *testing.T) {
	env := testutil.New(t)
	for i := range 3 {
		env.CreateItem(env.Alice, fmt.Sprintf("n%d", i))
	}
	tok := env.Alice.Token
	byName := *getCursorPage(t, env, tok, "?limit=1&sort=name&order=asc").Meta.Pagination.NextCursor
	byDefault := *getCursorPage(t, env, tok, "?limit=1").Meta.Pagination.NextCursor
	id := getCursorPage(t, env, tok, "?limit=1").Data[0].ID
	now := time.Now().UTC()
	type w = map[string]any

	bad := func(name, q string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: "/v1/items?" + q, Token: tok, Status: 400,
			Code: "VALIDATION_ERROR", Contains: []string{`"field":"cursor"`}}
	}
	ok := func(name, q string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: "/v1/items?" + q, Token: tok, Status: 200,
			Contains: []string{`"next_cursor":`}, NotContains: []string{`"page":`}}
	}
	testutil.Run(t, env, []testutil.Scenario{
		ok("a cursor of the same order", "sort=name&order=asc&cursor="+byName),
		ok("a cursor with page=1", "page=1&cursor="+byDefault),
		ok("a cursor with another limit", "limit=50&cursor="+byDefault),
		ok("a cursor with a filter", "status=archived&cursor="+byDefault),
		bad("empty", "cursor="),
		bad("not base64", "cursor=%21%21%21"),
		bad("standard base64 padding", "cursor="+byDefault+"=="),
		bad("base64 of garbage", "cursor="+base64.RawURLEncoding.EncodeToString([]byte("hello, world"))),
		bad("truncated", "cursor="+byDefault[:len(byDefault)-4]),
		bad("too long", "cursor="+strings.Repeat("A", 2000)),
		bad("another sort", "sort=created_at&order=asc&cursor="+byName),
		bad("another order", "sort=name&order=desc&cursor="+byName),
		bad("default order, cursor of name", "cursor="+byName),
		bad("with page 2", "page=2&cursor="+byDefault),
		bad("an entgql cursor", "cursor="+forge(t, w{"i": id, "v": now})),
		bad("a user id", "cursor="+forge(t, w{"i": "user_01hzzzzzzzzzzzzzzzzzzzzzzz", "v": now, "s": "created_at", "d": true})),
		bad("a malformed id", "cursor="+forge(t, w{"i": "item_x'; drop table items", "v": now, "s": "created_at", "d": true})),
		bad("a string for a time", "cursor="+forge(t, w{"i": id, "v": "2026-01-01", "s": "created_at", "d": true})),
		bad("a time for a name", "sort=name&cursor="+forge(t, w{"i": id, "v": now, "s": "name", "d": true})),
		bad("no value", "cursor="+forge(t, w{"i": id, "s": "created_at", "d": true})),
		bad("an unknown sort", "cursor="+forge(t, w{"i": id, "v": now, "s": "description", "d": true})),
		bad("an unknown field", "cursor="+forge(t, w{"i": id, "v": now, "s": "created_at", "d": true, "x": 1})),
		bad("a number", "cursor="+forge(t, 42)),
		bad("an array", "cursor="+forge(t, []any{id, now})),
		bad("a huge array header", "cursor="+base64.RawURLEncoding.EncodeToString([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})),
	})
	// A forged cursor of the right shape is only a position: it shows
	// nothing the caller could not list anyway.
	forged := forge(t, w{"i": "item_01hzzzzzzzzzzzzzzzzzzzzzzz", "v": now.Add(time.Hour), "s": "created_at", "d": true})
	if got := getCursorPage(t, env, tok, "?cursor="+forged); len(got.Data) != 3 {
		t.Errorf("forged cursor after every item: %v, want Alice's 3 items", got.ids())
	}
	if got := getCursorPage(t, env, env.Bob.Token, "?cursor="+forged); len(got.Data) != 0 {
		t.Errorf("Bob with Alice's position: %v, want nothing", got.ids())
	}
}
