package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// dialLegacyWS opens a connection in the legacy graphql-ws protocol
// (subscriptions-transport-ws), which gqlgen still speaks; every read and
// write on it gives up after 10s.
func dialLegacyWS(t *testing.T, url string) (context.Context, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow(); cancel() })
	return ctx, conn
}

// readLegacy returns the next message other than a keep-alive.
func readLegacy(ctx context.Context, conn *websocket.Conn) (wsMsg, error) {
	for {
		var m wsMsg
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			return m, err
		}
		if m.Type != "ka" {
			return m, nil
		}
	}
}

// TestLegacyWebSocket: a connection in the legacy graphql-ws protocol that
// sent connection_init is not closed by the wait for it (4408 closed every
// such connection after the init timeout), and a start with the id of a
// running operation closes 4409 and stops every operation of the
// connection (gqlgen left the first running, streaming past stop and
// holding a stream slot), as on graphql-transport-ws.
func TestLegacyWebSocket(t *testing.T) {
	env, srv := newSocketEnv(t) // a short init timeout
	const stream = `subscription { itemEvents { id } }`
	start := func(ctx context.Context, conn *websocket.Conn, id string) {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"query": stream})
		if err := wsjson.Write(ctx, conn, wsMsg{ID: id, Type: "start", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	initLegacy := func(ctx context.Context, conn *websocket.Conn) {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + env.Alice.Token})
		if err := wsjson.Write(ctx, conn, wsMsg{Type: "connection_init", Payload: payload}); err != nil {
			t.Fatal(err)
		}
		if m, err := readLegacy(ctx, conn); err != nil || m.Type != "connection_ack" {
			t.Fatalf("ack: %+v %v", m, err)
		}
	}

	// subscribed opens a connection running subscription "1", once no
	// other subscriber is left.
	subscribed := func(t *testing.T) (context.Context, *websocket.Conn) {
		t.Helper()
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		ctx, conn := dialLegacyWS(t, srv.URL)
		initLegacy(ctx, conn)
		start(ctx, conn, "1")
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		return ctx, conn
	}

	t.Run("initialised connection outlives the init timeout", func(t *testing.T) {
		ctx, conn := subscribed(t)
		readCtx, cancel := context.WithTimeout(ctx, time.Second) // well past the init timeout
		defer cancel()
		if m, err := readLegacy(readCtx, conn); err == nil {
			t.Fatalf("unexpected message %+v", m)
		} else if code := websocket.CloseStatus(err); code != -1 {
			t.Fatalf("closed %d after connection_init", code)
		}
		conn.CloseNow()
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
	})

	t.Run("duplicate id closes 4409 and leaves no orphan", func(t *testing.T) {
		ctx, conn := subscribed(t)
		start(ctx, conn, "1")
		var code websocket.StatusCode = -1
		for {
			if _, err := readLegacy(ctx, conn); err != nil {
				code = websocket.CloseStatus(err)
				break
			}
		}
		if code != 4409 {
			t.Fatalf("close code %d, want 4409", code)
		}
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
	})

	t.Run("an id freed by stop can start again", func(t *testing.T) {
		ctx, conn := subscribed(t)
		if err := wsjson.Write(ctx, conn, wsMsg{ID: "1", Type: "stop"}); err != nil {
			t.Fatal(err)
		}
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		start(ctx, conn, "1")
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		conn.CloseNow()
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
	})
}

// TestPingBeforeInit: graphql-transport-ws allows ping and pong at any
// time; before connection_init a ping is answered with a pong and the
// connection goes on (gqlgen closed it 1002).
func TestPingBeforeInit(t *testing.T) {
	env, srv := newSocketEnv(t)
	c := dialWS(t, srv)
	c.sendRaw(`{"type":"pong"}`)
	c.sendRaw(`{"type":"ping"}`)
	var m wsMsg
	if err := wsjson.Read(c.ctx, c.conn, &m); err != nil || m.Type != "pong" {
		t.Fatalf("got %+v %v, want a pong", m, err)
	}
	c.init(env.Alice.Token)
	c.subscribe("q", `{ me { id } }`)
	if _, code := c.result("q"); code != "" {
		t.Fatalf("code %s", code)
	}
}
