package rest_test

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// itemEvents counts the events of item id on the newest page of actor's feed.
func itemEvents(t *testing.T, env *testutil.Env, token, id string) int {
	t.Helper()
	env.WaitPublished() // on PostgreSQL the feed shows an event once older transactions end
	evs, _ := listEvents(t, env, token, "/v1/events?limit=100")
	n := 0
	for _, e := range evs {
		if e.Data.ID == id {
			n++
		}
	}
	return n
}

// TestConditionalItems: ETag, If-None-Match and If-Match on /v1/items/{id},
// one row per case of RFC 9110's conditional requests the API offers. Each
// row gets its own item, read (stale) and then changed once (fresh), so a
// stale tag names a version the item has moved past.
func TestConditionalItems(t *testing.T) {
	env := testutil.New(t, noRateLimit)
	alice := env.Alice
	const unknown = "item_01m80r92d8jcq7kyybma0724rk"
	bobs := env.CreateItem(env.Bob, "bob's item")
	bobsTag := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + bobs, Token: env.Bob.Token}).Header.Get("ETag")

	// What the row's header value is, from the item's tags.
	type tags struct{ stale, fresh string }
	const (
		same    = "same"    // the response's ETag is the fresh one
		moved   = "moved"   // a new ETag, the one a GET now answers
		none    = ""        // no ETag expected
		gone    = "gone"    // the item is deleted
		unmoved = "unmoved" // no ETag, and the item still has the fresh one
	)
	rows := []struct {
		name   string
		method string
		path   string // default /v1/items/{the row's item}
		body   any
		header string
		value  func(tags) string
		status int
		code   string
		etag   string // same, moved, none, gone, unmoved
		events int    // new events of the row's item
	}{
		{name: "GET without headers", method: "GET", status: 200, etag: same},
		{name: "GET If-None-Match current", method: "GET", header: "If-None-Match",
			value: func(g tags) string { return g.fresh }, status: 304, etag: same},
		{name: "GET If-None-Match weak form of current", method: "GET", header: "If-None-Match",
			value: func(g tags) string { return "W/" + g.fresh }, status: 304, etag: same},
		{name: "GET If-None-Match star", method: "GET", header: "If-None-Match",
			value: func(tags) string { return "*" }, status: 304, etag: same},
		{name: "GET If-None-Match list naming current", method: "GET", header: "If-None-Match",
			value: func(g tags) string { return `"other", ` + g.stale + ", " + g.fresh }, status: 304, etag: same},
		{name: "GET If-None-Match stale", method: "GET", header: "If-None-Match",
			value: func(g tags) string { return g.stale }, status: 200, etag: same},
		{name: "GET If-None-Match malformed", method: "GET", header: "If-None-Match",
			value: func(tags) string { return "unquoted" }, status: 400, code: "VALIDATION_ERROR", etag: unmoved},
		{name: "GET If-None-Match unknown item", method: "GET", path: "/v1/items/" + unknown, header: "If-None-Match",
			value: func(tags) string { return "*" }, status: 404, code: "NOT_FOUND", etag: unmoved},

		{name: "PUT without headers changes", method: "PUT", body: map[string]any{"name": "changed"},
			status: 200, etag: moved, events: 1},
		{name: "PUT If-Match current changes", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(g tags) string { return g.fresh }, status: 200, etag: moved, events: 1},
		{name: "PUT If-Match list naming current", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(g tags) string { return g.stale + "," + g.fresh }, status: 200, etag: moved, events: 1},
		{name: "PUT If-Match star", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(tags) string { return "*" }, status: 200, etag: moved, events: 1},
		{name: "PUT If-Match current, nothing changes", method: "PUT", body: map[string]any{"description": "moved"},
			header: "If-Match", value: func(g tags) string { return g.fresh }, status: 200, etag: same},
		{name: "PUT without headers, nothing changes", method: "PUT", body: map[string]any{"description": "moved"},
			status: 200, etag: same},
		{name: "PUT If-Match stale", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(g tags) string { return g.stale }, status: 412, code: "PRECONDITION_FAILED", etag: unmoved},
		{name: "PUT If-Match stale, nothing would change", method: "PUT", body: map[string]any{"description": "moved"},
			header: "If-Match", value: func(g tags) string { return g.stale }, status: 412, code: "PRECONDITION_FAILED", etag: unmoved},
		{name: "PUT If-Match weak form of current", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(g tags) string { return "W/" + g.fresh }, status: 412, code: "PRECONDITION_FAILED", etag: unmoved},
		{name: "PUT If-Match another item's tag", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(tags) string { return bobsTag }, status: 412, code: "PRECONDITION_FAILED", etag: unmoved},
		{name: "PUT If-Match malformed", method: "PUT", body: map[string]any{"name": "changed"}, header: "If-Match",
			value: func(g tags) string { return g.fresh + " x" }, status: 400, code: "VALIDATION_ERROR", etag: unmoved},
		{name: "PUT If-Match unknown item", method: "PUT", path: "/v1/items/" + unknown, body: map[string]any{"name": "x"},
			header: "If-Match", value: func(g tags) string { return g.fresh }, status: 404, code: "NOT_FOUND", etag: unmoved},
		{name: "PUT If-Match another user's item", method: "PUT", path: "/v1/items/" + bobs, body: map[string]any{"name": "x"},
			header: "If-Match", value: func(tags) string { return bobsTag }, status: 403, code: "PERMISSION_DENIED", etag: unmoved},

		{name: "DELETE If-Match stale", method: "DELETE", header: "If-Match",
			value: func(g tags) string { return g.stale }, status: 412, code: "PRECONDITION_FAILED", etag: unmoved},
		{name: "DELETE If-Match malformed", method: "DELETE", header: "If-Match",
			value: func(tags) string { return `"open` }, status: 400, code: "VALIDATION_ERROR", etag: unmoved},
		{name: "DELETE If-Match current", method: "DELETE", header: "If-Match",
			value: func(g tags) string { return g.fresh }, status: 200, etag: gone, events: 1},
		{name: "DELETE If-Match star", method: "DELETE", header: "If-Match",
			value: func(tags) string { return "*" }, status: 200, etag: gone, events: 1},
		{name: "DELETE without headers", method: "DELETE", status: 200, etag: gone, events: 1},
		{name: "DELETE If-Match unknown item", method: "DELETE", path: "/v1/items/" + unknown, header: "If-Match",
			value: func(tags) string { return "*" }, status: 404, code: "NOT_FOUND", etag: unmoved},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			created := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: alice.Token,
				Body: map[string]any{"name": "n", "description": "d"}})
			var it struct{ ID string }
			created.Data(t, &it)
			var g tags
			g.stale = created.Header.Get("ETag")
			if get := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + it.ID, Token: alice.Token}); get.Header.Get("ETag") != g.stale {
				t.Fatalf("POST's ETag %q, GET's %q", g.stale, get.Header.Get("ETag"))
			}
			change := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + it.ID, Token: alice.Token,
				Body: map[string]any{"description": "moved"}})
			g.fresh = change.Header.Get("ETag")
			if g.stale == "" || g.fresh == "" || g.stale == g.fresh {
				t.Fatalf("ETags before and after a change: %q, %q", g.stale, g.fresh)
			}
			before := itemEvents(t, env, alice.Token, it.ID)

			path := tc.path
			if path == "" {
				path = "/v1/items/" + it.ID
			}
			req := testutil.Request{Method: tc.method, Path: path, Token: alice.Token, Body: tc.body}
			if tc.header != "" {
				req.Headers = map[string]string{tc.header: tc.value(g)}
			}
			r := env.Do(req)
			if r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Fatalf("%d %s, want %d %s\n%s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
			}
			if tc.status == http.StatusNotModified && len(r.Body) != 0 {
				t.Errorf("304 with a body: %s", r.Body)
			}
			if tc.status < 300 && tc.method != "DELETE" {
				var got struct{ ID string }
				r.Data(t, &got)
			}

			after := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + it.ID, Token: alice.Token})
			switch got := r.Header.Get("ETag"); tc.etag {
			case same:
				if got != g.fresh {
					t.Errorf("ETag %q, want the current %q", got, g.fresh)
				}
			case moved:
				if got == g.fresh || got == g.stale || got != after.Header.Get("ETag") {
					t.Errorf("ETag %q after a change from %q; a GET now answers %q", got, g.fresh, after.Header.Get("ETag"))
				}
			case gone:
				if after.Status != http.StatusNotFound {
					t.Errorf("the item is still there: %d", after.Status)
				}
			case unmoved:
				if got != "" {
					t.Errorf("ETag %q on a refusal", got)
				}
				if after.Header.Get("ETag") != g.fresh || !bytes.Contains(after.Body, []byte(`"name":"n"`)) {
					t.Errorf("the item changed: %s %s", after.Header.Get("ETag"), after.Body)
				}
			}
			if n := itemEvents(t, env, alice.Token, it.ID) - before; n != tc.events {
				t.Errorf("%d new events of the item, want %d", n, tc.events)
			}
		})
	}
}

// TestConditionalConcurrent: two changes conditioned on the same ETag, at
// once, never both succeed: exactly one is 200 and the other 412, whichever
// wins, and the item holds the winner's change. The update is written only
// where the version is still the one checked, so this holds on PostgreSQL's
// concurrent transactions as on SQLite's serial ones.
func TestConditionalConcurrent(t *testing.T) {
	env := testutil.New(t, noRateLimit)
	alice := env.Alice
	for round := range 8 {
		id := env.CreateItem(alice, "n")
		tag := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: alice.Token}).Header.Get("ETag")
		// The second writer deletes in odd rounds: a delete and an update
		// race the same way.
		second := "PUT"
		if round%2 == 1 {
			second = "DELETE"
		}
		reqs := []testutil.Request{
			{Method: "PUT", Path: "/v1/items/" + id, Token: alice.Token, Body: `{"name":"first"}`, Headers: map[string]string{"If-Match": tag}},
			{Method: second, Path: "/v1/items/" + id, Token: alice.Token, Headers: map[string]string{"If-Match": tag}},
		}
		if second == "PUT" {
			reqs[1].Body = `{"name":"second"}`
		}
		statuses := make([]int, len(reqs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, req := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = env.Do(req).Status
			}()
		}
		close(start)
		wg.Wait()
		// The loser is 412, or 404 when the winner deleted the item.
		want := map[[2]int]bool{{200, 412}: true, {412, 200}: true}
		if second == "DELETE" {
			want[[2]int{404, 200}] = true
		}
		if !want[[2]int(statuses)] {
			t.Fatalf("round %d (%s): statuses %v, want one 200 and one 412 (or 404 after the delete)", round, second, statuses)
		}
		after := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: alice.Token})
		switch winner := statuses[0] == http.StatusOK; {
		case winner && !bytes.Contains(after.Body, []byte(`"name":"first"`)):
			t.Errorf("round %d: the first won, the item is %d %s", round, after.Status, after.Body)
		case !winner && second == "PUT" && !bytes.Contains(after.Body, []byte(`"name":"second"`)):
			t.Errorf("round %d: the second won, the item is %s", round, after.Body)
		case !winner && second == "DELETE" && after.Status != http.StatusNotFound:
			t.Errorf("round %d: the delete won, the item is %d", round, after.Status)
		}
	}
}

// TestConditionalList: GET /v1/items carries a weak ETag of the page; the
// same query with it as If-None-Match is 304 until anything on the page,
// its total or its next cursor changes. A 304 is still charged to the key.
func TestConditionalList(t *testing.T) {
	env := testutil.New(t)
	alice := env.Alice
	a := env.CreateItem(alice, "a")
	env.CreateItem(alice, "b")
	list := func(inm string) *testutil.Response {
		return env.Do(testutil.Request{Method: "GET", Path: "/v1/items?limit=1", Token: alice.Token,
			Headers: map[string]string{"If-None-Match": inm}})
	}
	first := list("")
	tag := first.Header.Get("ETag")
	if first.Status != 200 || len(tag) < 4 || tag[:3] != `W/"` {
		t.Fatalf("list: %d, ETag %q, want 200 and a weak tag", first.Status, tag)
	}
	steps := []struct {
		name   string
		change func()
		status int
	}{
		{"unchanged", func() {}, 304},
		{"an item off the page changes", func() {
			env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + a, Token: alice.Token, Body: `{"name":"a2"}`})
		}, 304},
		{"an item is added", func() { env.CreateItem(alice, "c") }, 200},
		{"unchanged again", func() {}, 304},
		{"the item on the page changes", func() {
			var page []struct{ ID string }
			list("").Data(t, &page)
			env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + page[0].ID, Token: alice.Token, Body: `{"description":"x"}`})
		}, 200},
		{"malformed", func() { tag = "nope" }, 400},
	}
	for _, s := range steps {
		s.change()
		before := list("").Header.Get("X-RateLimit-Remaining")
		r := list(tag)
		if r.Status != s.status {
			t.Fatalf("%s: %d, want %d\n%s", s.name, r.Status, s.status, r.Body)
		}
		if s.status == 304 {
			if len(r.Body) != 0 || r.Header.Get("ETag") != tag {
				t.Errorf("%s: 304 with body %q, ETag %q", s.name, r.Body, r.Header.Get("ETag"))
			}
			b, _ := strconv.Atoi(before)
			if n, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining")); n != b-1 {
				t.Errorf("%s: X-RateLimit-Remaining %d after %d: a 304 is not charged", s.name, n, b)
			}
		}
		if s.status == 200 {
			tag = r.Header.Get("ETag")
		}
	}
}

// TestConditionalRace holds a PUT or DELETE conditioned on the current ETag
// between its check and its write: the row is locked by another transaction
// that then moves the item on (or deletes it) and commits. The held request
// must then fail as if it had come second, 412 (or 404 for a deleted item),
// not write over the change. Only PostgreSQL runs writers at once; SQLite's
// write transactions are serial (TestConditionalConcurrent covers both).
func TestConditionalRace(t *testing.T) {
	if !testutil.OnPostgres() {
		t.Skip("SQLite serializes write transactions: no change can come between the check and the write")
	}
	env := testutil.New(t, noRateLimit)
	alice, db := env.Alice, env.App.DB.SQL
	rows := []struct {
		name   string
		method string
		body   any
		other  string // what the other transaction does to the row
		status int
		code   string
	}{
		{"PUT after a change", "PUT", `{"name":"late"}`, `UPDATE items SET version = version + 1, name = 'other' WHERE id = $1`, 412, "PRECONDITION_FAILED"},
		{"PUT of a new status after a change", "PUT", `{"status":"archived"}`, `UPDATE items SET version = version + 1, name = 'other' WHERE id = $1`, 412, "PRECONDITION_FAILED"},
		{"DELETE after a change", "DELETE", nil, `UPDATE items SET version = version + 1, name = 'other' WHERE id = $1`, 412, "PRECONDITION_FAILED"},
		{"PUT after a delete", "PUT", `{"name":"late"}`, `DELETE FROM items WHERE id = $1`, 404, "NOT_FOUND"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			id := env.CreateItem(alice, "n")
			tag := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: alice.Token}).Header.Get("ETag")
			before := itemEvents(t, env, alice.Token, id)

			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
			var pid int
			if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid() FROM items WHERE id = $1 FOR UPDATE`, id).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			done := make(chan *testutil.Response, 1)
			go func() {
				done <- env.Do(testutil.Request{Method: tc.method, Path: "/v1/items/" + id, Token: alice.Token,
					Body: tc.body, Headers: map[string]string{"If-Match": tag}})
			}()
			// The request has passed its check when it waits for the row.
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				var n int
				err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&n)
				return err == nil && n > 0
			}) {
				t.Fatal("the request never waited for the locked row")
			}
			if _, err := tx.ExecContext(ctx, tc.other, id); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Fatalf("%d %s, want %d %s\n%s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
			}
			var name string
			err = db.QueryRowContext(ctx, `SELECT name FROM items WHERE id = $1`, id).Scan(&name)
			if tc.status == 412 && (err != nil || name != "other") {
				t.Errorf("the other change was overwritten: name %q, %v", name, err)
			}
			if n := itemEvents(t, env, alice.Token, id) - before; n != 0 {
				t.Errorf("%d events of the refused change", n)
			}
		})
	}
}
