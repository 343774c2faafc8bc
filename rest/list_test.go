package rest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestListParams: one row per bound of every list parameter (DESIGN §3).
func TestListParams(t *testing.T) {
	env := testutil.New(t)
	tok := env.Alice.Token
	list := func(q string) string { return "/v1/items" + q }
	bad := func(name, q string) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: list(q), Token: tok, Status: 400, Code: "VALIDATION_ERROR"}
	}
	field := func(s testutil.Scenario, f string) testutil.Scenario {
		s.Contains = []string{`"field":"` + f + `"`}
		return s
	}
	paged := func(name, q string, page, limit int) testutil.Scenario {
		return testutil.Scenario{Name: name, Method: "GET", Path: list(q), Token: tok, Status: 200,
			Contains: []string{fmt.Sprintf(`"pagination":{"page":%d,"limit":%d,"total":0,"pages":0,"next_cursor":null}`, page, limit)}}
	}
	testutil.Run(t, env, []testutil.Scenario{
		paged("defaults", "", 1, 20),
		paged("page 1", "?page=1", 1, 20),
		paged("large page", "?page=2147483647", 2147483647, 20),
		paged("limit 1", "?limit=1", 1, 1),
		paged("limit 100", "?limit=100", 1, 100),
		paged("all parameters", "?page=2&limit=5&status=archived&user_id="+env.Alice.UserID+"&sort=name&order=asc", 2, 5),
		paged("unknown parameters are ignored", "?_=123", 1, 20),
		field(bad("page 0", "?page=0"), "page"),
		field(bad("page negative", "?page=-1"), "page"),
		field(bad("page not a number", "?page=abc"), "page"),
		field(bad("page empty", "?page="), "page"),
		field(bad("page fractional", "?page=1.5"), "page"),
		field(bad("page overflow", "?page=99999999999999999999"), "page"),
		field(bad("page past int32", "?page=2147483648"), "page"),
		field(bad("limit 0", "?limit=0"), "limit"),
		field(bad("limit 101", "?limit=101"), "limit"),
		field(bad("limit not a number", "?limit=ten"), "limit"),
		field(bad("status unknown", "?status=deleted"), "status"),
		field(bad("status empty", "?status="), "status"),
		field(bad("sort unknown", "?sort=description"), "sort"),
		field(bad("sort injection", "?sort=name%3Bdrop%20table%20items"), "sort"),
		field(bad("order unknown", "?order=sideways"), "order"),
		field(bad("order upper case", "?order=DESC"), "order"),
		field(bad("user_id malformed", "?user_id=42"), "user_id"),
	})
}

type listed struct {
	Data []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		UserID string `json:"user_id"`
	} `json:"data"`
	Meta struct {
		Pagination struct{ Page, Limit, Total, Pages int } `json:"pagination"`
	} `json:"meta"`
}

func getList(t *testing.T, env *testutil.Env, token, q string) listed {
	t.Helper()
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items" + q, Token: token})
	if r.Status != 200 {
		t.Fatalf("GET /v1/items%s: %d %s", q, r.Status, r.Body)
	}
	var l listed
	if err := json.Unmarshal(r.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func ids(l listed) []string {
	out := make([]string, len(l.Data))
	for i, d := range l.Data {
		out[i] = d.ID
	}
	return out
}

// TestListPaging: totals, pages, a page past the end, stable order with ties,
// and filters.
func TestListPaging(t *testing.T) {
	env := testutil.New(t)
	var created []string
	for i := range 7 {
		// Names repeat, so sorting by name has ties that id must break.
		created = append(created, env.CreateItem(env.Alice, fmt.Sprintf("n%d", i%2)))
	}
	env.CreateItem(env.Bob, "bob's")
	r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + created[0], Token: env.Alice.Token, Body: map[string]any{"status": "archived"}})
	testutil.Scenario{Status: 200}.Assert(t, r)

	l := getList(t, env, env.Alice.Token, "?limit=3")
	if p := l.Meta.Pagination; p.Total != 7 || p.Pages != 3 || p.Limit != 3 || len(l.Data) != 3 {
		t.Fatalf("pagination = %+v with %d items, want total 7, pages 3", p, len(l.Data))
	}
	// Default order is created_at desc: newest first.
	newest := slices.Clone(created)
	slices.Reverse(newest)
	if got := ids(l); !slices.Equal(got, newest[:3]) {
		t.Errorf("default order = %v, want %v", got, newest[:3])
	}

	// Walking the pages of every sort returns each item exactly once.
	for _, sort := range []string{"created_at", "updated_at", "name"} {
		for _, order := range []string{"asc", "desc"} {
			var seen []string
			for page := 1; page <= 3; page++ {
				seen = append(seen, ids(getList(t, env, env.Alice.Token, fmt.Sprintf("?limit=3&page=%d&sort=%s&order=%s", page, sort, order)))...)
			}
			got := slices.Sorted(slices.Values(seen))
			want := slices.Sorted(slices.Values(created))
			if !slices.Equal(got, want) {
				t.Errorf("sort=%s order=%s: pages hold %v, want each of %v once", sort, order, seen, created)
			}
		}
	}

	past := getList(t, env, env.Alice.Token, "?limit=3&page=4")
	if len(past.Data) != 0 || past.Meta.Pagination.Total != 7 || past.Meta.Pagination.Pages != 3 {
		t.Errorf("page past the end = %+v, want empty with the true total", past)
	}
	if got := getList(t, env, env.Alice.Token, "?status=archived"); len(got.Data) != 1 || got.Data[0].ID != created[0] {
		t.Errorf("status=archived = %v", ids(got))
	}
	if got := getList(t, env, env.Alice.Token, "?status=active"); got.Meta.Pagination.Total != 6 {
		t.Errorf("status=active total = %d, want 6", got.Meta.Pagination.Total)
	}
	names := getList(t, env, env.Alice.Token, "?sort=name&order=asc&limit=100")
	for i := 1; i < len(names.Data); i++ {
		if names.Data[i-1].Name > names.Data[i].Name {
			t.Errorf("sort=name asc out of order at %d: %v", i, names.Data)
		}
	}
}

// TestOwnerScoping: non-admins see and change only their own items through
// every endpoint; admins see and change everyone's.
func TestOwnerScoping(t *testing.T) {
	env := testutil.New(t)
	a1 := env.CreateItem(env.Alice, "a1")
	a2 := env.CreateItem(env.Alice, "a2")
	b1 := env.CreateItem(env.Bob, "b1")

	if got := ids(getList(t, env, env.Alice.Token, "")); !sameSet(got, []string{a1, a2}) {
		t.Errorf("alice lists %v, want her own", got)
	}
	if got := ids(getList(t, env, env.Bob.Token, "")); !sameSet(got, []string{b1}) {
		t.Errorf("bob lists %v, want his own", got)
	}
	if got := ids(getList(t, env, env.Alice.Token, "?user_id="+env.Alice.UserID)); !sameSet(got, []string{a1, a2}) {
		t.Errorf("alice filtering on herself lists %v", got)
	}
	if got := ids(getList(t, env, env.Admin.Token, "")); !sameSet(got, []string{a1, a2, b1}) {
		t.Errorf("admin lists %v, want all", got)
	}
	if got := ids(getList(t, env, env.Admin.Token, "?user_id="+env.Bob.UserID)); !sameSet(got, []string{b1}) {
		t.Errorf("admin filtering on bob lists %v", got)
	}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "bob cannot read alice's", Method: "GET", Path: "/v1/items/" + a1, Token: env.Bob.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "bob cannot update alice's", Method: "PUT", Path: "/v1/items/" + a1, Token: env.Bob.Token, Body: `{"name":"x"}`, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "bob cannot delete alice's", Method: "DELETE", Path: "/v1/items/" + a1, Token: env.Bob.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "admin reads alice's", Method: "GET", Path: "/v1/items/" + a1, Token: env.Admin.Token, Status: 200},
		{Name: "admin updates bob's", Method: "PUT", Path: "/v1/items/" + b1, Token: env.Admin.Token, Body: `{"name":"by admin"}`, Status: 200,
			Contains: []string{`"name":"by admin"`, `"user_id":"` + env.Bob.UserID + `"`}},
		{Name: "admin deletes alice's", Method: "DELETE", Path: "/v1/items/" + a2, Token: env.Admin.Token, Status: 200},
		{Name: "admin creates for themself", Method: "POST", Path: "/v1/items", Token: env.Admin.Token, Body: `{"name":"mine"}`, Status: 201,
			Contains: []string{`"user_id":"` + env.Admin.UserID + `"`}},
	})
	// Bob's failed attempts changed nothing.
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + a1, Token: env.Alice.Token})
	testutil.Scenario{Status: 200, Contains: []string{`"name":"a1"`}}.Assert(t, r)
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
