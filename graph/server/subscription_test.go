package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

const itemEventsQuery = `subscription($after: ID, $types: [ItemEventType!]) { itemEvents(after: $after, types: $types) { id type timestamp item { id name userID } } }`

// subEvent is one result of a subscription: an event or the error that
// ended it.
type subEvent struct {
	ID, Type, Name, UserID string
	Code                   string // extensions.code of an error
}

// subscriber reads one subscription's results.
type subscriber struct {
	results chan subEvent
}

func (s *subscriber) next(t *testing.T) subEvent {
	t.Helper()
	select {
	case r, ok := <-s.results:
		if !ok {
			t.Fatal("subscription completed")
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no result within 10s")
	}
	return subEvent{}
}

// parseResult reads an execution result of itemEvents.
func parseResult(t *testing.T, payload []byte) subEvent {
	t.Helper()
	var r struct {
		Data struct {
			ItemEvents *struct {
				ID, Type string
				Item     struct{ ID, Name, UserID string }
			}
		}
		Errors []testutil.GQLError
	}
	if err := json.Unmarshal(payload, &r); err != nil {
		t.Errorf("result %s: %v", payload, err)
		return subEvent{}
	}
	if len(r.Errors) > 0 {
		code, _ := r.Errors[0].Extensions["code"].(string)
		return subEvent{Code: code}
	}
	if r.Data.ItemEvents == nil {
		t.Errorf("result without data: %s", payload)
		return subEvent{}
	}
	e := r.Data.ItemEvents
	return subEvent{ID: e.ID, Type: e.Type, Name: e.Item.Name, UserID: e.Item.UserID}
}

type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribeWS subscribes over graphql-ws (graphql-transport-ws), as the
// graphql-ws client does.
func subscribeWS(t *testing.T, srv *httptest.Server, token string, vars map[string]any) *subscriber {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	init := map[string]any{}
	if token != "" {
		init["Authorization"] = "Bearer " + token
	}
	payload, _ := json.Marshal(init)
	if err := wsjson.Write(ctx, conn, wsMsg{Type: "connection_init", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	var ack wsMsg
	if err := wsjson.Read(ctx, conn, &ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("ack: %+v %v", ack, err)
	}
	payload, _ = json.Marshal(map[string]any{"query": itemEventsQuery, "variables": vars})
	if err := wsjson.Write(ctx, conn, wsMsg{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	s := &subscriber{results: make(chan subEvent, 100)}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); conn.CloseNow(); <-done })
	go func() {
		defer close(done)
		defer close(s.results)
		for {
			var m wsMsg
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				return
			}
			switch m.Type {
			case "next":
				s.results <- parseResult(t, m.Payload)
			case "error":
				var errs []testutil.GQLError
				_ = json.Unmarshal(m.Payload, &errs)
				code := "?"
				if len(errs) > 0 {
					code, _ = errs[0].Extensions["code"].(string)
				}
				s.results <- subEvent{Code: code}
				return
			case "complete":
				return
			case "ping":
				_ = wsjson.Write(ctx, conn, wsMsg{Type: "pong"})
			}
		}
	}()
	return s
}

// subscribeSSE subscribes over Server-Sent Events (POST, Accept:
// text/event-stream), gqlgen's SSE transport.
func subscribeSSE(t *testing.T, srv *httptest.Server, token string, vars map[string]any) (*subscriber, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp := testutil.PostSSE(ctx, t, srv, token, itemEventsQuery, vars)
	s := &subscriber{results: make(chan subEvent, 100)}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	go func() {
		defer close(done)
		defer close(s.results)
		sc := bufio.NewScanner(resp.Body)
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = line[7:]
			case strings.HasPrefix(line, "data: ") && event == "next":
				s.results <- parseResult(t, []byte(line[6:]))
			case event == "complete":
				return
			}
		}
	}()
	return s, resp
}

// TestSubscriptions: itemEvents over graphql-ws and SSE delivers the
// caller's created, updated and deleted events from REST and GraphQL
// changes, never another user's, resumes after an id, and refuses a caller
// without a token.
func TestSubscriptions(t *testing.T) {
	env := testutil.New(t)
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	transports := []struct {
		name string
		open func(t *testing.T, token string, vars map[string]any) *subscriber
	}{
		{"graphql-ws", func(t *testing.T, token string, vars map[string]any) *subscriber {
			return subscribeWS(t, srv, token, vars)
		}},
		{"sse", func(t *testing.T, token string, vars map[string]any) *subscriber {
			s, _ := subscribeSSE(t, srv, token, vars)
			return s
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			// A subscription delivers from when it is registered: wait
			// for that through the hub's subscriber count, once the
			// previous transport's have gone.
			waitSubscribers(t, env, func(n int) bool { return n == 0 })
			s := tr.open(t, env.Alice.Token, nil)
			waitSubscribers(t, env, func(n int) bool { return n == 1 })
			id := env.CreateItem(env.Alice, "rest") // REST create
			env.CreateItem(env.Bob, "bob's")        // never reaches Alice
			r := testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { updateItem(id: $id, input: {name: "gql"}) { id } }`, map[string]any{"id": id})
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			testutil.GQL(t, env, env.Alice.Token, `mutation($id: ID!) { deleteItem(id: $id) }`, map[string]any{"id": id})
			var got []string
			var ids []string
			for range 3 {
				e := s.next(t)
				if e.UserID != env.Alice.UserID {
					t.Fatalf("got another user's event: %+v", e)
				}
				got = append(got, e.Type+":"+e.Name)
				ids = append(ids, e.ID)
			}
			if want := "CREATED:rest,UPDATED:gql,DELETED:gql"; strings.Join(got, ",") != want {
				t.Fatalf("events = %v, want %s", got, want)
			}
			// Resume after the first: exactly the two that followed.
			r2 := tr.open(t, env.Alice.Token, map[string]any{"after": ids[0]})
			for _, want := range ids[1:] {
				if e := r2.next(t); e.ID != want {
					t.Fatalf("resumed: got %+v, want %s", e, want)
				}
			}
			// Types filter.
			r3 := tr.open(t, env.Alice.Token, map[string]any{"after": ids[0], "types": []string{"DELETED"}})
			if e := r3.next(t); e.ID != ids[2] {
				t.Fatalf("filtered: got %+v", e)
			}
		})
	}
	t.Run("anonymous refused", func(t *testing.T) {
		if e := subscribeWS(t, srv, "", nil).next(t); e.Code != "UNAUTHORIZED" {
			t.Fatalf("graphql-ws: %+v", e)
		}
		s, resp := subscribeSSE(t, srv, "", nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("sse status %d", resp.StatusCode)
		}
		if e := s.next(t); e.Code != "UNAUTHORIZED" {
			t.Fatalf("sse: %+v", e)
		}
	})
	t.Run("unknown after", func(t *testing.T) {
		// An id of the future: one older than EVENT_RETENTION is CURSOR_EXPIRED.
		if e := subscribeWS(t, srv, env.Alice.Token, map[string]any{"after": "evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"}).next(t); e.Code != "VALIDATION_ERROR" {
			t.Fatalf("got %+v", e)
		}
	})
}

// TestSubscriptionEnds: a revoked key ends a subscription with UNAUTHORIZED.
func TestSubscriptionEnds(t *testing.T) {
	env := testutil.New(t, testutil.WithAppOptions(func(o *app.Options) {
		o.Service.StreamRecheck = 20 * time.Millisecond
		o.Service.KeyRecheck = time.Millisecond
	}))
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	s := subscribeWS(t, srv, env.Alice.Token, nil)
	waitSubscribers(t, env, func(n int) bool { return n == 1 })
	if _, err := env.App.Service.RevokeKey(context.Background(), env.Alice.KeyID); err != nil {
		t.Fatal(err)
	}
	if e := s.next(t); e.Code != "UNAUTHORIZED" {
		t.Fatalf("got %+v", e)
	}
}

// waitSubscribers waits until the number of streams receiving live
// events satisfies ok.
func waitSubscribers(t *testing.T, env *testutil.Env, ok func(int) bool) {
	t.Helper()
	if !testutil.Eventually(t, 10*time.Second, func() bool { return ok(env.App.Events.Subscribers()) }) {
		t.Fatalf("subscribers: %d", env.App.Events.Subscribers())
	}
}

// TestConditionalEventEtag: the item of an itemEvents event has no known
// etag (events carry no version), so selecting it is a VALIDATION_ERROR on
// etag rather than a tag that names no version of the item.
func TestConditionalEventEtag(t *testing.T) {
	env, srv := newSocketEnv(t)
	waitSubscribers(t, env, func(n int) bool { return n == 0 })
	results := make(chan []byte, 1)
	go func() {
		resp := post(t, srv, env.Alice.Token, `subscription { itemEvents { id item { id etag } } }`, "application/json")
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		results <- b.Bytes()
	}()
	waitSubscribers(t, env, func(n int) bool { return n == 1 })
	env.CreateItem(env.Alice, "n")
	select {
	case payload := <-results:
		var r testutil.GQLResponse
		testutil.MustJSON(t, payload, &r)
		if r.Code() != "VALIDATION_ERROR" || r.Errors[0].Extensions["field"] != "etag" {
			t.Fatalf("result %s, want VALIDATION_ERROR on etag", payload)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no result within 10s")
	}
}
