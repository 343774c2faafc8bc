package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// wsClient drives one graphql-transport-ws connection message by message.
type wsClient struct {
	t    *testing.T
	ctx  context.Context
	conn *websocket.Conn
}

// dialWS opens a graphql-transport-ws connection; every read and write on
// it gives up after 10s.
func dialWS(t *testing.T, srv *httptest.Server) *wsClient {
	t.Helper()
	return dialWSWith(t, srv, nil)
}

// dialWSWith is dialWS with headers on the upgrade request.
func dialWSWith(t *testing.T, srv *httptest.Server, header http.Header) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow(); cancel() })
	return &wsClient{t: t, ctx: ctx, conn: conn}
}

func (c *wsClient) sendRaw(s string) {
	c.t.Helper()
	if err := c.conn.Write(c.ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// init sends connection_init (with the token, if any) and waits for the ack.
func (c *wsClient) init(token string) {
	c.t.Helper()
	p := map[string]any{}
	if token != "" {
		p["Authorization"] = "Bearer " + token
	}
	payload, _ := json.Marshal(p)
	if err := wsjson.Write(c.ctx, c.conn, wsMsg{Type: "connection_init", Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
	if m, err := c.read(); err != nil || m.Type != "connection_ack" {
		c.t.Fatalf("ack: %+v %v", m, err)
	}
}

// subscribe starts operation id.
func (c *wsClient) subscribe(id, query string) {
	c.t.Helper()
	c.subscribeWith(id, query, nil)
}

// subscribeWith starts operation id with variables.
func (c *wsClient) subscribeWith(id, query string, vars map[string]any) {
	c.t.Helper()
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err := wsjson.Write(c.ctx, c.conn, wsMsg{ID: id, Type: "subscribe", Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message other than a ping (answered).
func (c *wsClient) read() (wsMsg, error) {
	for {
		var m wsMsg
		if err := wsjson.Read(c.ctx, c.conn, &m); err != nil {
			return m, err
		}
		if m.Type != "ping" {
			return m, nil
		}
		_ = wsjson.Write(c.ctx, c.conn, wsMsg{Type: "pong"})
	}
}

// result reads operation id's next result: its payload and the code of its
// first error ("" if none), from a next or an error message.
func (c *wsClient) result(id string) (json.RawMessage, string) {
	c.t.Helper()
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for a result of %s: %v", id, err)
		}
		if m.ID != id || (m.Type != "next" && m.Type != "error") {
			continue
		}
		var errs []testutil.GQLError
		if m.Type == "next" {
			var r struct{ Errors []testutil.GQLError }
			_ = json.Unmarshal(m.Payload, &r)
			errs = r.Errors
		} else {
			_ = json.Unmarshal(m.Payload, &errs)
		}
		if len(errs) > 0 {
			code, _ := errs[0].Extensions["code"].(string)
			return m.Payload, code
		}
		return m.Payload, ""
	}
}

// closeCode reads until the server closes the connection and returns its
// close code (-1: the connection failed otherwise, or did not close).
func (c *wsClient) closeCode() websocket.StatusCode {
	c.t.Helper()
	for {
		if _, err := c.read(); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// newSocketEnv starts a server with short stream rechecks and init timeout.
func newSocketEnv(t *testing.T, opts ...testutil.Option) (*testutil.Env, *httptest.Server) {
	opts = append([]testutil.Option{testutil.WithAppOptions(func(o *app.Options) {
		o.WebSocketInitTimeout = 200 * time.Millisecond
	})}, opts...)
	env := testutil.New(t, opts...)
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	return env, srv
}

// TestWebSocketAuthorizationPerOperation: every operation on an open socket
// is authorized again by REST's rule: once the key is revoked, or the token
// has expired, the next query, mutation or subscription fails with its code
// and the socket closes 4403 (the old code authorized the connection once
// and kept its rights).
func TestWebSocketAuthorizationPerOperation(t *testing.T) {
	ops := []struct{ name, query string }{
		{"query", `{ me { id } }`},
		{"mutation", `mutation { createItem(input: {name: "late"}) { id } }`},
		{"subscription", `subscription { itemEvents { id } }`},
	}
	t.Run("revoked key", func(t *testing.T) {
		env, srv := newSocketEnv(t)
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				as := env.NewActor("alice@example.com", "Alice", false) // a key of its own
				c := dialWS(t, srv)
				c.init(as.Token)
				c.subscribe("before", `{ me { id } }`)
				if _, code := c.result("before"); code != "" {
					t.Fatalf("before revocation: %s", code)
				}
				if _, err := env.App.Service.RevokeKey(context.Background(), as.KeyID); err != nil {
					t.Fatal(err)
				}
				c.subscribe("after", op.query)
				if _, code := c.result("after"); code != "UNAUTHORIZED" {
					t.Fatalf("after revocation: code %q, want UNAUTHORIZED", code)
				}
				if code := c.closeCode(); code != 4403 {
					t.Fatalf("close code %d, want 4403", code)
				}
			})
		}
	})
	t.Run("expired token", func(t *testing.T) {
		// A token's expiry is a whole second (JWT exp): with a TTL of one
		// second it could lapse before connection_init, a few ms after it
		// was issued; two leave at least one second for the init.
		env, srv := newSocketEnv(t, testutil.WithConfig(func(c *config.Config) { c.TokenTTL = 2 * time.Second }))
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				as := env.NewActor("alice@example.com", "Alice", false)
				c := dialWS(t, srv)
				c.init(as.Token)
				// Wait for the expiry REST sees.
				if !testutil.Eventually(t, 10*time.Second, func() bool {
					return testutil.GQL(t, env, as.Token, `{ me { id } }`, nil).Code() == "TOKEN_EXPIRED"
				}) {
					t.Fatal("the token did not expire")
				}
				c.subscribe("late", op.query)
				if _, code := c.result("late"); code != "TOKEN_EXPIRED" {
					t.Fatalf("code %q, want TOKEN_EXPIRED", code)
				}
				if code := c.closeCode(); code != 4403 {
					t.Fatalf("close code %d, want 4403", code)
				}
			})
		}
	})
	t.Run("anonymous socket", func(t *testing.T) {
		_, srv := newSocketEnv(t)
		c := dialWS(t, srv)
		c.init("")
		c.subscribe("1", `{ __typename }`)
		if _, code := c.result("1"); code != "" {
			t.Fatalf("introspection: %s", code)
		}
		c.subscribe("2", `{ me { id } }`)
		if _, code := c.result("2"); code != "UNAUTHORIZED" {
			t.Fatalf("me: code %q, want UNAUTHORIZED", code)
		}
	})
}

// TestStreamEndsOnRevocation: a running subscription (graphql-ws, SSE)
// ends with UNAUTHORIZED, at the itemEvents path, within KeyRecheck of a
// revocation made by another replica (straight in the database, so that
// this process's key cache still holds the key as valid); the socket then
// closes 4403. The old code rechecked every 30s.
func TestStreamEndsOnRevocation(t *testing.T) {
	const keyRecheck = time.Second
	env, srv := newSocketEnv(t, testutil.WithAppOptions(func(o *app.Options) {
		o.Service.KeyRecheck = keyRecheck // StreamRecheck: its default, KeyRecheck/2
	}))
	revokeElsewhere := func(t *testing.T, keyID string) time.Time {
		t.Helper()
		if err := env.App.DB.Client.APIKey.UpdateOneID(keyID).SetRevokedAt(time.Now()).Exec(privacy.DecisionContext(t.Context(), privacy.Allow)); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	// bound: KeyRecheck, and slack for a loaded machine.
	const bound = keyRecheck + 500*time.Millisecond

	t.Run("graphql-ws", func(t *testing.T) {
		as := env.NewActor("alice@example.com", "Alice", false)
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		c := dialWS(t, srv)
		c.init(as.Token)
		c.subscribe("s", `subscription { itemEvents { id } }`)
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		revoked := revokeElsewhere(t, as.KeyID)
		payload, code := c.result("s")
		if code != "UNAUTHORIZED" {
			t.Fatalf("code %q, want UNAUTHORIZED", code)
		}
		if took := time.Since(revoked); took > bound {
			t.Fatalf("the stream ended %v after the revocation, want within %v", took, bound)
		}
		var r struct{ Errors []struct{ Path []any } }
		_ = json.Unmarshal(payload, &r)
		if len(r.Errors) == 0 || len(r.Errors[0].Path) != 1 || r.Errors[0].Path[0] != "itemEvents" {
			t.Fatalf("error path: %s", payload)
		}
		if code := c.closeCode(); code != 4403 {
			t.Fatalf("close code %d, want 4403", code)
		}
	})
	t.Run("sse", func(t *testing.T) {
		as := env.NewActor("alice@example.com", "Alice", false)
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		s, _ := subscribeSSE(t, srv, as.Token, nil)
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		revoked := revokeElsewhere(t, as.KeyID)
		if e := s.next(t); e.Code != "UNAUTHORIZED" {
			t.Fatalf("got %+v, want UNAUTHORIZED", e)
		}
		if took := time.Since(revoked); took > bound {
			t.Fatalf("the stream ended %v after the revocation, want within %v", took, bound)
		}
	})
}

// TestWebSocketProtocol: graphql-transport-ws's close codes, where gqlgen
// alone closed 1002 or 1000, or not at all.
func TestWebSocketProtocol(t *testing.T) {
	env, srv := newSocketEnv(t)
	const stream = `subscription { itemEvents { id } }`
	cases := []struct {
		name string
		run  func(t *testing.T, c *wsClient)
		want websocket.StatusCode
	}{
		{"no connection_init", func(*testing.T, *wsClient) {}, 4408},
		{"message not JSON", func(_ *testing.T, c *wsClient) { c.init(env.Alice.Token); c.sendRaw("{not json") }, 4400},
		{"unknown message type", func(_ *testing.T, c *wsClient) { c.init(env.Alice.Token); c.sendRaw(`{"type":"bogus"}`) }, 4400},
		{"subscribe without id", func(_ *testing.T, c *wsClient) {
			c.init(env.Alice.Token)
			c.sendRaw(`{"type":"subscribe","payload":{"query":"{ me { id } }"}}`)
		}, 4400},
		{"subscribe whose payload is not an operation", func(_ *testing.T, c *wsClient) {
			c.init(env.Alice.Token)
			c.sendRaw(`{"type":"subscribe","id":"1","payload":"{ me { id } }"}`)
		}, 4400},
		{"subscribe without a query", func(_ *testing.T, c *wsClient) {
			c.init(env.Alice.Token)
			c.sendRaw(`{"type":"subscribe","id":"1","payload":{"variables":{}}}`)
		}, 4400},
		{"connection_init with a bad token", func(_ *testing.T, c *wsClient) {
			c.sendRaw(`{"type":"connection_init","payload":{"Authorization":"Bearer not-a-token"}}`)
		}, 4403},
		{"subscribe before connection_init", func(_ *testing.T, c *wsClient) { c.subscribe("1", `{ __typename }`) }, 4401},
		{"second connection_init", func(_ *testing.T, c *wsClient) { c.init(env.Alice.Token); c.sendRaw(`{"type":"connection_init"}`) }, 4429},
		{"duplicate subscription id", func(t *testing.T, c *wsClient) {
			waitSubscribers(t, env, func(n int) bool { return n == 0 })
			c.init(env.Alice.Token)
			c.subscribe("1", stream)
			waitSubscribers(t, env, func(n int) bool { return n == 1 })
			c.subscribe("1", stream)
		}, 4409},
		{"a completed id may be used again", func(t *testing.T, c *wsClient) {
			c.init(env.Alice.Token)
			for range 2 {
				c.subscribe("q", `{ me { id } }`)
				if _, code := c.result("q"); code != "" {
					t.Fatalf("code %s", code)
				}
				for m, err := c.read(); m.Type != "complete"; m, err = c.read() {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			c.sendRaw(`{"type":"bogus"}`) // to end the case with a close
		}, 4400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialWS(t, srv)
			tc.run(t, c)
			if code := c.closeCode(); code != tc.want {
				t.Fatalf("close code %d, want %d", code, tc.want)
			}
			// Whatever ran on the connection has stopped: no orphan
			// stream keeps its slot in the hub.
			waitSubscribers(t, env, func(n int) bool { return n == 0 })
		})
	}
}

// TestItemEventsOwner: item { owner } in itemEvents answers the owner on
// every transport, under item(id){owner}'s privacy (an admin sees another
// user's), where it answered INTERNAL_ERROR and logged a panic per event.
func TestItemEventsOwner(t *testing.T) {
	env, srv := newSocketEnv(t)
	const query = `subscription { itemEvents { id item { id owner { id } } } }`
	type result struct {
		Data struct {
			ItemEvents struct {
				Item struct{ Owner struct{ ID string } }
			}
		}
		Errors []testutil.GQLError
	}
	open := map[string]func(t *testing.T, token string) <-chan json.RawMessage{
		"graphql-ws": func(t *testing.T, token string) <-chan json.RawMessage {
			c := dialWS(t, srv)
			c.init(token)
			c.subscribe("1", query)
			out := make(chan json.RawMessage, 1)
			go func() {
				for {
					m, err := c.read()
					if err != nil {
						return
					}
					if m.Type == "next" || m.Type == "error" {
						out <- m.Payload
						return
					}
				}
			}()
			return out
		},
		"sse": func(t *testing.T, token string) <-chan json.RawMessage {
			resp := post(t, srv, token, query, "text/event-stream")
			out := make(chan json.RawMessage, 1)
			go func() {
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && line != "" {
						out <- json.RawMessage(line)
						return
					}
				}
			}()
			return out
		},
		"post": func(t *testing.T, token string) <-chan json.RawMessage {
			out := make(chan json.RawMessage, 1)
			go func() {
				resp := post(t, srv, token, query, "application/json")
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				out <- b.Bytes()
			}()
			return out
		},
	}
	for _, name := range []string{"graphql-ws", "sse", "post"} {
		for _, viewer := range []struct {
			name  string
			token string
		}{{"owner", env.Alice.Token}, {"admin", env.Admin.Token}} {
			t.Run(name+"/"+viewer.name, func(t *testing.T) {
				waitSubscribers(t, env, func(n int) bool { return n == 0 })
				results := open[name](t, viewer.token)
				waitSubscribers(t, env, func(n int) bool { return n == 1 })
				env.CreateItem(env.Alice, "owned")
				select {
				case payload := <-results:
					var r result
					testutil.MustJSON(t, payload, &r)
					if len(r.Errors) > 0 || r.Data.ItemEvents.Item.Owner.ID != env.Alice.UserID {
						t.Fatalf("result %s, want the owner %s", payload, env.Alice.UserID)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no result within 10s")
				}
			})
		}
	}
}

// TestPostSubscriptionClientLeaves: a subscription over plain POST whose
// client leaves before the first event ends quietly, where it panicked and
// logged a 500.
func TestPostSubscriptionClientLeaves(t *testing.T) {
	env, srv := newSocketEnv(t)
	requests := func(status string) float64 {
		labels := map[string]string{"method": "POST"}
		if status != "" {
			labels["status"] = status
		}
		return env.Scrape().Value("http_requests_total", labels)
	}
	all := func() float64 { return requests("") }
	before := all()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"query": `subscription { itemEvents { id } }`})
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitSubscribers(t, env, func(n int) bool { return n == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	waitSubscribers(t, env, func(n int) bool { return n == 0 })
	// The server has logged the request once its handler returned.
	if !testutil.Eventually(t, 10*time.Second, func() bool { return all() > before }) {
		t.Fatal("the request was never logged")
	}
	if n := requests("500"); n != 0 {
		t.Fatalf("%v requests answered 500", n)
	}
}

// post sends query over POST, accepting accept; the response body is
// closed when the test ends.
func post(t *testing.T, srv *httptest.Server, token, query, accept string) *http.Response {
	ctx, cancel := context.WithCancel(context.Background())
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Error(err)
		return &http.Response{Body: http.NoBody}
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp
}

// TestItemEventsErrorPath: an error in a field of an event has a path from
// the subscription's field (its alias), on every transport; it lacked it
// (["item", "owner", "items"]).
func TestItemEventsErrorPath(t *testing.T) {
	env, srv := newSocketEnv(t)
	const query = `subscription { ev: itemEvents { id item { owner { items(first: 1, after: "not-a-cursor") { totalCount } } } } }`
	transports := map[string]func(t *testing.T) <-chan json.RawMessage{
		"graphql-ws": func(t *testing.T) <-chan json.RawMessage {
			c := dialWS(t, srv)
			c.init(env.Alice.Token)
			c.subscribe("1", query)
			out := make(chan json.RawMessage, 1)
			go func() {
				for m, err := c.read(); err == nil; m, err = c.read() {
					if m.Type == "next" {
						out <- m.Payload
						return
					}
				}
			}()
			return out
		},
		"post": func(t *testing.T) <-chan json.RawMessage {
			out := make(chan json.RawMessage, 1)
			go func() {
				var b bytes.Buffer
				_, _ = b.ReadFrom(post(t, srv, env.Alice.Token, query, "application/json").Body)
				out <- b.Bytes()
			}()
			return out
		},
	}
	for name, open := range transports {
		t.Run(name, func(t *testing.T) {
			waitSubscribers(t, env, func(n int) bool { return n == 0 })
			results := open(t)
			waitSubscribers(t, env, func(n int) bool { return n == 1 })
			env.CreateItem(env.Alice, "x")
			select {
			case payload := <-results:
				var r struct{ Errors []struct{ Path []any } }
				testutil.MustJSON(t, payload, &r)
				if len(r.Errors) == 0 || len(r.Errors[0].Path) < 2 || r.Errors[0].Path[0] != "ev" || r.Errors[0].Path[1] != "item" {
					t.Fatalf("result %s: want an error at [ev item owner items]", payload)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no result within 10s")
			}
		})
	}
}

// TestEventStreamPingsEndWithIt: an event stream's keep-alive pings stop
// when its operation ends. With a ping every millisecond, queries and
// subscriptions over SSE, each ended by the server or by the client, end
// cleanly: a ping that came after the end would write to a finished
// response, which panics on the pinging goroutine and ends the process.
func TestEventStreamPingsEndWithIt(t *testing.T) {
	env, srv := newSocketEnv(t, testutil.WithAppOptions(func(o *app.Options) {
		o.KeepAlive = time.Millisecond
	}), testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 100000, 100000
	}))
	for i := range 1000 {
		resp := testutil.PostSSE(context.Background(), t, srv, env.Alice.Token, `{ me { id } }`, nil)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		// A ping may still follow complete while the operation ends: a
		// comment, which clients skip.
		last := bytes.TrimSpace(body)
		for bytes.HasSuffix(last, []byte(": ping")) {
			last = bytes.TrimSpace(bytes.TrimSuffix(last, []byte(": ping")))
		}
		if err != nil || resp.StatusCode != 200 || !bytes.HasSuffix(last, []byte("event: complete")) {
			t.Fatalf("query %d: %d %v %q", i, resp.StatusCode, err, body)
		}
	}
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		resp := testutil.PostSSE(ctx, t, srv, env.Alice.Token, `subscription { itemEvents { id } }`, nil)
		br := bufio.NewReader(resp.Body)
		for pings := 0; pings < 3; { // the stream is open and pinging
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("subscription %d: %v", i, err)
			}
			if line == ": ping\n" {
				pings++
			}
		}
		cancel()
		resp.Body.Close()
	}
	waitSubscribers(t, env, func(n int) bool { return n == 0 })
}

// TestSocketMutationsKeepTheUpgradesRequestID: a mutation over a WebSocket
// is audited with the request id of the socket's upgrade (the one its
// access line carries), as a POST's is with the POST's.
func TestSocketMutationsKeepTheUpgradesRequestID(t *testing.T) {
	env, srv := newSocketEnv(t)
	c := dialWSWith(t, srv, http.Header{"X-Request-Id": {"socket-upgrade-1"}})
	c.init(env.Admin.Token)
	c.subscribe("1", `mutation { createUser(input: {email: "wes@example.com", name: "Wes"}) { id } }`)
	payload, code := c.result("1")
	if code != "" {
		t.Fatalf("createUser over the socket: %s %s", code, payload)
	}
	var r struct {
		Data struct{ CreateUser struct{ ID string } }
	}
	if err := json.Unmarshal(payload, &r); err != nil || r.Data.CreateUser.ID == "" {
		t.Fatalf("createUser: %s (%v)", payload, err)
	}
	rec, err := env.App.DB.Client.AuditEvent.Query().Where(auditevent.TargetID(r.Data.CreateUser.ID)).Only(testutil.SystemContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if rec.RequestID == nil || *rec.RequestID != "socket-upgrade-1" {
		t.Errorf("request id %v, want the upgrade's socket-upgrade-1", rec.RequestID)
	}
}
