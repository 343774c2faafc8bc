package server_test

import (
	"bufio"
	"bytes"
	"context"
	stdsql "database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// untilDeadline is a name whose statements do not return before their
// context ends: the slowest read or write there is, on SQLite and PostgreSQL
// alike, without seeding a table big enough to outlast the deadline on
// either.
const untilDeadline = "wait-for-the-deadline"

// slowStatements wraps the database driver: a statement with untilDeadline
// in one of its arguments waits for its context to end and fails as the
// driver does then. Every other statement goes to the real database.
type slowStatements struct{ dialect.Driver }

// waits reports a statement of untilDeadline, once its context has ended.
func waits(ctx context.Context, args any) bool {
	list, _ := args.([]any)
	for _, a := range list {
		if s, ok := a.(string); ok && strings.Contains(s, untilDeadline) {
			<-ctx.Done()
			return true
		}
	}
	return false
}

// Query implements dialect.Driver.
func (d slowStatements) Query(ctx context.Context, query string, args, v any) error {
	if waits(ctx, args) {
		return ctx.Err()
	}
	return d.Driver.Query(ctx, query, args, v)
}

// Tx implements dialect.Driver: the statements of a mutation's
// transaction wait too.
func (d slowStatements) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return slowTx{tx}, nil
}

type slowTx struct{ dialect.Tx }

// Exec implements dialect.Tx.
func (t slowTx) Exec(ctx context.Context, query string, args, v any) error {
	if waits(ctx, args) {
		return ctx.Err()
	}
	return t.Tx.Exec(ctx, query, args, v)
}

// Query implements dialect.Tx.
func (t slowTx) Query(ctx context.Context, query string, args, v any) error {
	if waits(ctx, args) {
		return ctx.Err()
	}
	return t.Tx.Query(ctx, query, args, v)
}

// QueryContext and ExecContext pass on the statements the item hooks write
// without ent's builders.
func (t slowTx) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	}).QueryContext(ctx, query, args...)
}

// ExecContext: see QueryContext.
func (t slowTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	}).ExecContext(ctx, query, args...)
}

// TestDeadlineEveryTransport: REQUEST_TIMEOUT bounds a query whatever
// carries it (POST, GET asking for an event stream, POST answered as
// Server-Sent Events, graphql-ws), and a mutation likewise (POST, SSE,
// graphql-ws): each fails with UNAVAILABLE, reason timeout. A subscription opened before them, over SSE and over
// graphql-ws, outlives the deadline and still delivers.
func TestDeadlineEveryTransport(t *testing.T) {
	const timeout = 500 * time.Millisecond
	env := testutil.New(t,
		testutil.WithConfig(func(c *config.Config) { c.RequestTimeout = timeout }),
		testutil.WithAppOptions(func(o *app.Options) {
			o.WrapDriver = func(d dialect.Driver) dialect.Driver { return slowStatements{d} }
		}))
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	streams := []*subscriber{subscribeWS(t, srv, env.Alice.Token, nil)}
	sse, _ := subscribeSSE(t, srv, env.Alice.Token, nil)
	streams = append(streams, sse)
	waitSubscribers(t, env, func(n int) bool { return n == 2 })
	opened := time.Now()

	query := `{ items(where: {nameHasPrefix: "` + untilDeadline + `"}) { totalCount edges { node { id } } } }`
	mutation := `mutation { createItem(input: {name: "` + untilDeadline + `"}) { id } }`
	for _, c := range []struct {
		name string
		run  func(t *testing.T) []testutil.GQLError
	}{
		{"POST", func(t *testing.T) []testutil.GQLError {
			return httpOperation(t, srv, "POST", query, env.Alice.Token, "application/json")
		}},
		{"GET, Accept: text/event-stream", func(t *testing.T) []testutil.GQLError {
			return httpOperation(t, srv, "GET", query, env.Alice.Token, "text/event-stream")
		}},
		{"SSE", func(t *testing.T) []testutil.GQLError {
			return httpOperation(t, srv, "POST", query, env.Alice.Token, "text/event-stream")
		}},
		{"graphql-ws", func(t *testing.T) []testutil.GQLError {
			return wsOperation(t, srv, env.Alice.Token, query)
		}},
		{"mutation, POST", func(t *testing.T) []testutil.GQLError {
			return httpOperation(t, srv, "POST", mutation, env.Alice.Token, "application/json")
		}},
		{"mutation, SSE", func(t *testing.T) []testutil.GQLError {
			return httpOperation(t, srv, "POST", mutation, env.Alice.Token, "text/event-stream")
		}},
		{"mutation, graphql-ws", func(t *testing.T) []testutil.GQLError {
			return wsOperation(t, srv, env.Alice.Token, mutation)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			errs := c.run(t)
			if len(errs) == 0 || errs[0].Extensions["code"] != "UNAVAILABLE" || errs[0].Extensions["reason"] != "timeout" {
				t.Fatalf("errors %+v, want UNAVAILABLE, reason timeout", errs)
			}
			if d := time.Since(start); d < timeout {
				t.Fatalf("failed after %s, before the deadline", d)
			}
		})
	}

	if d := time.Since(opened); d < 2*timeout {
		t.Fatalf("the subscriptions are only %s old", d)
	}
	env.CreateItem(env.Alice, "after the deadline")
	for i, s := range streams {
		if e := s.next(t); e.Name != "after the deadline" {
			t.Fatalf("stream %d: %+v", i, e)
		}
	}
}

// httpOperation sends query over GET or POST with the Accept header given
// and returns the errors of its (first) result, reading an event stream's
// first event when the answer is one.
func httpOperation(t *testing.T, srv *httptest.Server, method, query, token, accept string) []testutil.GQLError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var req *http.Request
	if method == "GET" {
		req, _ = http.NewRequestWithContext(ctx, method, srv.URL+"/graphql?query="+url.QueryEscape(query), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query})
		req, _ = http.NewRequestWithContext(ctx, method, srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var result struct{ Errors []testutil.GQLError }
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
			t.Fatalf("%d: %v", resp.StatusCode, err)
		}
		return result.Errors
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			testutil.MustJSON(t, []byte(data), &result)
			return result.Errors
		}
	}
	t.Fatalf("the event stream ended without a result: %v", sc.Err())
	return nil
}

// wsOperation runs query over a new graphql-ws connection and returns the
// errors of its result.
func wsOperation(t *testing.T, srv *httptest.Server, token, query string) []testutil.GQLError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	if err := wsjson.Write(ctx, conn, wsMsg{Type: "connection_init", Payload: init}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"query": query})
	if err := wsjson.Write(ctx, conn, wsMsg{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	for {
		var m wsMsg
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("no result: %v", err)
		}
		switch m.Type {
		case "next":
			var result struct{ Errors []testutil.GQLError }
			testutil.MustJSON(t, m.Payload, &result)
			return result.Errors
		case "error":
			var errs []testutil.GQLError
			testutil.MustJSON(t, m.Payload, &errs)
			return errs
		}
	}
}
