package graph_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// statementLog records the statements resolvers run for a viewer.
type statementLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stmts
	l.stmts = nil
	return s
}

// itemCounts returns the statements that count items (rather than read
// their counters).
func (l *statementLog) itemCounts() []string {
	var out []string
	for _, s := range l.take() {
		if strings.Contains(s, "COUNT(") && (strings.Contains(s, "FROM `items`") || strings.Contains(s, `FROM "items"`)) {
			out = append(out, s)
		}
	}
	return out
}

// newTotalsEnv starts a server whose statements are logged, with items:
// alice 3 active and 2 archived, bob 1 active and 2 archived, admin none.
func newTotalsEnv(t *testing.T) (*testutil.Env, *statementLog) {
	t.Helper()
	log := &statementLog{}
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) {
		o.WrapDriver = func(d dialect.Driver) dialect.Driver {
			return dialect.DebugWithContext(d, func(ctx context.Context, args ...any) {
				if _, ok := viewer.FromContext(ctx); ok {
					log.mu.Lock()
					log.stmts = append(log.stmts, fmt.Sprint(args...))
					log.mu.Unlock()
				}
			})
		}
	}))
	for owner, statuses := range map[testutil.Actor][]string{
		env.Alice: {"active", "active", "active", "archived", "archived"},
		env.Bob:   {"active", "archived", "archived"},
	} {
		for i, st := range statuses {
			res := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: owner.Token,
				Body: map[string]any{"name": fmt.Sprintf("item %d", i), "status": st}})
			if res.Status != 201 {
				t.Fatalf("create: %d %s", res.Status, res.Body)
			}
		}
	}
	return env, log
}

// TestCountedTotals: for every filter the counters answer, REST's
// meta.pagination total and pages and GraphQL's totalCount are the true
// counts for admins and users alike, and no statement counts items.
func TestCountedTotals(t *testing.T) {
	env, log := newTotalsEnv(t)
	alice, bob := env.Alice.UserID, env.Bob.UserID
	cases := []struct {
		name         string
		as           testutil.Actor
		status, user string
		total        int
		forbidden    bool // REST refuses; GraphQL's privacy shows nothing
	}{
		{name: "admin, all", as: env.Admin, total: 8},
		{name: "admin, active", as: env.Admin, status: "active", total: 4},
		{name: "admin, archived", as: env.Admin, status: "archived", total: 4},
		{name: "admin, alice's", as: env.Admin, user: alice, total: 5},
		{name: "admin, alice's archived", as: env.Admin, status: "archived", user: alice, total: 2},
		{name: "admin, bob's active", as: env.Admin, status: "active", user: bob, total: 1},
		{name: "admin, own (none)", as: env.Admin, user: env.Admin.UserID, total: 0},
		{name: "alice, all", as: env.Alice, total: 5},
		{name: "alice, active", as: env.Alice, status: "active", total: 3},
		{name: "alice, own archived", as: env.Alice, status: "archived", user: alice, total: 2},
		{name: "alice, bob's", as: env.Alice, user: bob, forbidden: true},
		{name: "bob, archived", as: env.Bob, status: "archived", total: 2},
		{name: "bob, alice's active", as: env.Bob, status: "active", user: alice, forbidden: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := url.Values{"limit": {"2"}}
			where := map[string]any{}
			if c.status != "" {
				q.Set("status", c.status)
				where["status"] = strings.ToUpper(c.status) // REST's active is GraphQL's ACTIVE
			}
			if c.user != "" {
				q.Set("user_id", c.user)
				where["userID"] = c.user
			}
			log.take()

			for _, page := range []string{"1", "9"} { // 9 is past the end
				q.Set("page", page)
				res := env.Do(testutil.Request{Method: "GET", Path: "/v1/items?" + q.Encode(), Token: c.as.Token})
				if c.forbidden {
					if res.Status != 403 {
						t.Fatalf("REST %d, want 403: %s", res.Status, res.Body)
					}
					continue
				}
				var body struct {
					Data []any `json:"data"`
					Meta struct {
						Pagination struct{ Total, Pages int } `json:"pagination"`
					} `json:"meta"`
				}
				testutil.MustJSON(t, res.Body, &body)
				p := body.Meta.Pagination
				if res.Status != 200 || p.Total != c.total || p.Pages != (c.total+1)/2 {
					t.Errorf("REST page %s: %d, total %d pages %d; want total %d pages %d", page, res.Status, p.Total, p.Pages, c.total, (c.total+1)/2)
				}
				if want := min(2, c.total); page == "1" && len(body.Data) != want || page == "9" && len(body.Data) != 0 {
					t.Errorf("REST page %s: %d items", page, len(body.Data))
				}
			}

			want := c.total // GraphQL: another owner's items are filtered away, not refused
			r := testutil.GQL(t, env, c.as.Token, `query($w: ItemWhereInput) { items(first: 2, where: $w) { totalCount edges { node { id } } } }`,
				map[string]any{"w": where}).OK(t)
			if got := r.At(t, "items", "totalCount"); got != float64(want) {
				t.Errorf("GraphQL totalCount %v, want %d", got, want)
			}
			if n := len(r.IDs(t, "items")); n != min(2, want) {
				t.Errorf("GraphQL %d nodes, want %d", n, min(2, want))
			}
			if counts := log.itemCounts(); len(counts) > 0 {
				t.Errorf("items were counted:\n%s", strings.Join(counts, "\n"))
			}
		})
	}
}

// TestCountedTotalsOfUsers: the items connection of a user answers from the
// counters too, in one read for the whole response, however the query spells
// the connection (variables, fragments, aliases, pageInfo alone); a filter
// the counters do not know is still counted, and right.
func TestCountedTotalsOfUsers(t *testing.T) {
	env, log := newTotalsEnv(t)
	const userItems = `fragment totals on User { all: items { totalCount } archived: items(where: {status: ARCHIVED}) { totalCount } }`
	cases := []struct {
		name    string
		as      testutil.Actor
		query   string
		vars    map[string]any
		path    []any
		want    any
		counted bool // the filter is not the counters': items are counted
	}{
		{name: "me", as: env.Alice, query: `{ me { items { totalCount } } }`, path: []any{"me", "items", "totalCount"}, want: 5.0},
		{name: "me, archived, aliased", as: env.Alice, query: `{ me { items(where: {status: ARCHIVED}) { n: totalCount } } }`, path: []any{"me", "items", "n"}, want: 2.0},
		{name: "me, another owner", as: env.Alice, query: `query($u: ID) { me { items(where: {userID: $u}) { totalCount } } }`,
			vars: map[string]any{"u": env.Bob.UserID}, path: []any{"me", "items", "totalCount"}, want: 0.0},
		{name: "node of a user, through a fragment", as: env.Admin, query: `query($id: ID!) { node(id: $id) { ...totals } } ` + userItems,
			vars: map[string]any{"id": env.Bob.UserID}, path: []any{"node", "archived", "totalCount"}, want: 2.0},
		{name: "users, each one's total", as: env.Admin, query: `{ users(where: {email: "alice@example.com"}) { edges { node { ...totals } } } } ` + userItems,
			path: []any{"users", "edges", 0, "node", "all", "totalCount"}, want: 5.0},
		{name: "owners of a page of items", as: env.Admin, query: `{ items(first: 8, orderBy: {field: NAME, direction: ASC}, where: {userID: "` + env.Bob.UserID + `"}) { edges { node { owner { items(where: {status: ACTIVE}) { totalCount } } } } } }`,
			path: []any{"items", "edges", 2, "node", "owner", "items", "totalCount"}, want: 1.0},
		{name: "pageInfo without edges: the one page has no next", as: env.Bob, query: `{ items(where: {status: ACTIVE}) { pageInfo { hasNextPage hasPreviousPage } } }`,
			path: []any{"items", "pageInfo", "hasNextPage"}, want: false},
		{name: "pageInfo without edges: a next page", as: env.Bob, query: `{ items(first: 1) { pageInfo { hasNextPage hasPreviousPage } } }`,
			path: []any{"items", "pageInfo", "hasNextPage"}, want: true},
		{name: "a page of none", as: env.Bob, query: `{ items(first: 0) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`,
			path: []any{"items", "totalCount"}, want: 3.0},
		{name: "another filter is counted", as: env.Admin, query: `{ items(where: {status: ARCHIVED, nameHasPrefix: "item 1"}) { totalCount } }`,
			path: []any{"items", "totalCount"}, want: 1.0, counted: true},
		{name: "an empty owner id is a filter", as: env.Admin, query: `{ items(where: {userID: ""}) { totalCount } }`,
			path: []any{"items", "totalCount"}, want: 0.0, counted: true},
		{name: "another filter of a user's items", as: env.Alice, query: `{ me { items(where: {statusIn: [ARCHIVED]}) { totalCount } } }`,
			path: []any{"me", "items", "totalCount"}, want: 2.0, counted: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log.take()
			r := testutil.GQL(t, env, c.as.Token, c.query, c.vars).OK(t)
			if got := r.At(t, c.path...); got != c.want {
				t.Errorf("%v = %v, want %v: %s", c.path, got, c.want, r.Raw)
			}
			// The counted cases also prove the statement log sees a count.
			if counts := log.itemCounts(); (len(counts) > 0) != c.counted {
				t.Errorf("items counted: %d statements, want them only for other filters:\n%s", len(counts), strings.Join(counts, "\n"))
			}
		})
	}
}
