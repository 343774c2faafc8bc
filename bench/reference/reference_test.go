package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// envelope is the part of a response both servers must agree on.
type envelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Meta    struct {
		RequestID  string `json:"request_id"`
		Pagination *struct {
			Page, Limit, Total, Pages int
		} `json:"pagination"`
	} `json:"meta"`
}

// TestReferenceMatchesServer holds the yardstick to the product: on the
// same database, with the same token, each measured request answers the
// same status and data as the server, and writes its outbox event.
func TestReferenceMatchesServer(t *testing.T) {
	secret := []byte("reference-test-secret-0123456789abcdef")
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.JWTSecret = string(secret) }))
	for _, name := range []string{"one", "two", "three"} {
		env.CreateItem(env.Alice, name)
	}
	bobs := env.CreateItem(env.Bob, "bob's")
	st, err := openStore(env.App.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.db.Close() })
	ref := newServer(st, secret, slog.New(slog.NewTextHandler(io.Discard, nil))).routes()

	send := func(h http.Handler, method, path, body string) (int, envelope) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, rd)
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var e envelope
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("%s %s: not an envelope: %s", method, path, rec.Body)
		}
		if e.Meta.RequestID == "" {
			t.Errorf("%s %s: no meta.request_id", method, path)
		}
		return rec.Code, e
	}
	first := env.CreateItem(env.Alice, "four")
	cases := []struct {
		name, method, path, body string
		// serverBody, if set, is the server's body: an update to what the
		// reference just wrote would be no change and write no event.
		serverBody string
		status     int
		sameData   bool
	}{
		{"list", "GET", "/v1/items?limit=2", "", "", 200, true},
		{"list page 2", "GET", "/v1/items?limit=2&page=2", "", "", 200, true},
		{"list past the end", "GET", "/v1/items?page=9", "", "", 200, true},
		{"get", "GET", "/v1/items/" + first, "", "", 200, true},
		{"get another user's item", "GET", "/v1/items/" + bobs, "", "", 0, false},
		{"create", "POST", "/v1/items", `{"name":"made","description":"d"}`, "", 201, false},
		{"update", "PUT", "/v1/items/" + first, `{"name":"renamed"}`, `{"name":"renamed again"}`, 200, false},
		{"list after the creates", "GET", "/v1/items?limit=2&page=3", "", "", 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := countEvents(t, st)
			refStatus, refEnv := send(ref, c.method, c.path, c.body)
			srvBody := c.body
			if c.serverBody != "" {
				srvBody = c.serverBody
			}
			srvStatus, srvEnv := send(env.App.Handler, c.method, c.path, srvBody)
			if c.status != 0 && (refStatus != c.status || srvStatus != c.status) {
				t.Fatalf("status: reference %d, server %d, want %d", refStatus, srvStatus, c.status)
			}
			if c.status == 0 && (refStatus < 400 || srvStatus < 400) {
				t.Fatalf("status: reference %d, server %d, want failures", refStatus, srvStatus)
			}
			if c.sameData && string(refEnv.Data) != string(srvEnv.Data) {
				t.Errorf("data differs:\nreference %s\nserver    %s", refEnv.Data, srvEnv.Data)
			}
			if (refEnv.Meta.Pagination == nil) != (srvEnv.Meta.Pagination == nil) ||
				refEnv.Meta.Pagination != nil && *refEnv.Meta.Pagination != *srvEnv.Meta.Pagination {
				t.Errorf("pagination: reference %+v, server %+v", refEnv.Meta.Pagination, srvEnv.Meta.Pagination)
			}
			if c.method != "GET" {
				if got := countEvents(t, st) - events; got != 2 {
					t.Errorf("%d outbox events written by the two servers, want 2 (one each)", got)
				}
			}
		})
	}
}

// TestReferenceKeepsCounts: the reference counts its creates in the item
// counters, as the server's hooks do, so that totals agree with the items.
func TestReferenceKeepsCounts(t *testing.T) {
	env := testutil.New(t)
	env.CreateItem(env.Alice, "by the server")
	st, err := openStore(env.App.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.db.Close() })
	ctx := context.Background()
	for _, name := range []string{"one", "two"} {
		if _, err := st.create(ctx, viewer{userID: env.Alice.UserID}, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	var items, counted int
	if err := st.db.QueryRow(`SELECT COUNT(*) FROM items`).Scan(&items); err != nil {
		t.Fatal(err)
	}
	if err := st.db.QueryRow(`SELECT SUM(count) FROM item_counts`).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if items != 3 || counted != items {
		t.Fatalf("%d items, %d counted; want 3 and 3", items, counted)
	}
}

func countEvents(t *testing.T, st *store) int {
	t.Helper()
	var n int
	if err := st.db.QueryRow("SELECT COUNT(*) FROM events").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
