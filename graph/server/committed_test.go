package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestEveryTransportReportsOnlyWhatCommitted: whatever the framing of a
// GraphQL mutation (JSON, application/graphql-response+json, an event
// stream, a graphql-ws socket), with an Idempotency-Key or without, a client is told of a
// change only if it committed: what it was told is compared with what the
// database holds and with the events the feed and webhooks are made of.
// A keyed success's retry replays it (in the retry's framing) and changes
// nothing more; a keyed failure's retry runs again, and fails again.
func TestEveryTransportReportsOnlyWhatCommitted(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 10000, 10000
	}))
	sys := privacy.DecisionContext(context.Background(), privacy.Allow)
	events := func() int {
		n, err := env.App.DB.Client.Event.Query().Count(sys)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	transports := []struct {
		name   string
		accept string // "": graphql-transport-ws
	}{
		{"json", "application/json"},
		{"graphql-response+json", "application/graphql-response+json"},
		{"sse", "text/event-stream"},
		{"websocket", ""},
	}
	// A case is one mutation with one outcome. setup makes the item it
	// works on (owner), and the query's variables; committed says, from
	// the database, whether the change happened.
	type subject struct{ id, name string }
	cases := []struct {
		name    string
		field   string
		query   string
		owner   func() testutil.Actor // nil: nothing to set up
		vars    func(s subject) map[string]any
		ok      bool
		code    string
		changed func(t *testing.T, s subject) bool
	}{
		{name: "create ok", field: "createItem", ok: true,
			query: `mutation($n: String!) { createItem(input: {name: $n}) { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"n": s.name} }},
		{name: "create invalid", field: "createItem", code: "VALIDATION_ERROR",
			query: `mutation($n: String!, $d: String) { createItem(input: {name: $n, description: $d}) { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"n": s.name, "d": strings.Repeat("x", 5001)} }},
		{name: "update ok", field: "updateItem", ok: true, owner: func() testutil.Actor { return env.Alice },
			query: `mutation($id: ID!, $n: String) { updateItem(id: $id, input: {name: $n}) { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id, "n": s.name + " new"} }},
		{name: "update invalid", field: "updateItem", code: "VALIDATION_ERROR", owner: func() testutil.Actor { return env.Alice },
			query: `mutation($id: ID!, $n: String) { updateItem(id: $id, input: {name: $n}) { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id, "n": "  "} }},
		{name: "update stale ifMatch", field: "updateItem", code: "PRECONDITION_FAILED", owner: func() testutil.Actor { return env.Alice },
			query: `mutation($id: ID!, $n: String) { updateItem(id: $id, input: {name: $n}, ifMatch: "\"stale\"") { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id, "n": s.name + " new"} }},
		{name: "update another's item", field: "updateItem", code: "PERMISSION_DENIED", owner: func() testutil.Actor { return env.Bob },
			query: `mutation($id: ID!, $n: String) { updateItem(id: $id, input: {name: $n}) { id name } }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id, "n": s.name + " new"} }},
		{name: "delete ok", field: "deleteItem", ok: true, owner: func() testutil.Actor { return env.Alice },
			query: `mutation($id: ID!) { deleteItem(id: $id) }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id} }},
		{name: "delete stale ifMatch", field: "deleteItem", code: "PRECONDITION_FAILED", owner: func() testutil.Actor { return env.Alice },
			query: `mutation($id: ID!) { deleteItem(id: $id, ifMatch: "\"stale\"") }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id} }},
		{name: "delete another's item", field: "deleteItem", code: "PERMISSION_DENIED", owner: func() testutil.Actor { return env.Bob },
			query: `mutation($id: ID!) { deleteItem(id: $id) }`,
			vars:  func(s subject) map[string]any { return map[string]any{"id": s.id} }},
	}
	// changed reads, from the database, whether the case's change happened.
	changed := func(t *testing.T, field string, s subject) bool {
		t.Helper()
		switch field {
		case "createItem":
			n, err := env.App.DB.Client.Item.Query().Where(item.Name(s.name)).Count(sys)
			if err != nil {
				t.Fatal(err)
			}
			return n > 0
		case "updateItem":
			it, err := env.App.DB.Client.Item.Get(sys, s.id)
			if err != nil {
				t.Fatal(err)
			}
			return it.Name != s.name
		default:
			n, err := env.App.DB.Client.Item.Query().Where(item.ID(s.id)).Count(sys)
			if err != nil {
				t.Fatal(err)
			}
			return n == 0
		}
	}
	seq := 0
	for _, tr := range transports {
		for _, c := range cases {
			for _, keyed := range []bool{false, true} {
				if keyed && tr.accept == "" {
					continue // a socket cannot honour a key: refused at the upgrade (TestIdempotencyKeyWhereNotHonoured)
				}
				name := fmt.Sprintf("%s/%s/key=%v", tr.name, c.name, keyed)
				t.Run(name, func(t *testing.T) {
					seq++
					s := subject{name: fmt.Sprintf("committed %d", seq)}
					if c.owner != nil {
						s.id = env.CreateItem(c.owner(), s.name)
					}
					headers := map[string]string{"Accept": tr.accept}
					if keyed {
						headers["Idempotency-Key"] = fmt.Sprintf("committed-%d", seq)
					}
					req := testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Headers: headers,
						Body: map[string]any{"query": c.query, "variables": c.vars(s)}}
					before := events()
					var told told
					var body []byte
					if tr.accept == "" {
						ws := dialWS(t, srv)
						ws.init(env.Alice.Token)
						ws.subscribeWith("1", c.query, c.vars(s))
						body, _ = ws.result("1")
						told = toldOf(t, body)
					} else {
						res := env.Do(req)
						told, body = readTold(t, res, tr.accept), res.Body
					}
					if told.ok != c.ok || told.code != c.code {
						t.Fatalf("told ok=%v code %q, want ok=%v code %q: %s", told.ok, told.code, c.ok, c.code, body)
					}
					if got := changed(t, c.field, s); got != told.ok {
						t.Fatalf("told ok=%v, but the change happened: %v (%s)", told.ok, got, body)
					}
					wantEvents := 0
					if told.ok {
						wantEvents = 1
					}
					if n := events() - before; n != wantEvents {
						t.Fatalf("%d events after a change told ok=%v, want %d", n, told.ok, wantEvents)
					}
					if !keyed {
						return
					}
					// The retry, with the same key.
					again := env.Do(req)
					retold := readTold(t, again, tr.accept)
					replayed := again.Header.Get("Idempotent-Replayed") == "true"
					if replayed != c.ok {
						t.Errorf("retry: Idempotent-Replayed %v, want %v", replayed, c.ok)
					}
					if c.ok && !bytes.Equal(retold.data, told.data) {
						t.Errorf("retry told %s, want the first answer %s", retold.data, told.data)
					}
					if !c.ok && (retold.ok || retold.code != c.code) {
						t.Errorf("retry told ok=%v code %q, want the failure %q again: %s", retold.ok, retold.code, c.code, again.Body)
					}
					if n := events() - before; n != wantEvents {
						t.Errorf("%d events after the retry, want %d", n, wantEvents)
					}
				})
			}
		}
	}
}

// told is what a GraphQL response told its client of a mutation.
type told struct {
	ok   bool
	code string
	data json.RawMessage
}

// readTold reads a mutation's response in the framing accept asked for: a
// success is data with no errors; an event stream tells it in its one next
// event.
func readTold(t *testing.T, res *testutil.Response, accept string) told {
	t.Helper()
	body := res.Body
	if accept == "text/event-stream" && res.Status == http.StatusOK {
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q, want text/event-stream: %s", ct, body)
		}
		var next [][]byte
		for _, block := range bytes.Split(body, []byte("\n\n")) {
			if data, ok := bytes.CutPrefix(block, []byte("event: next\ndata: ")); ok {
				next = append(next, data)
			}
		}
		if len(next) != 1 || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("event: complete")) {
			t.Fatalf("want one next event, then complete: %s", body)
		}
		body = next[0]
	}
	return toldOf(t, body)
}

// toldOf reads a mutation's result: a response body, a next event's data
// or a graphql-ws next message's payload (an object), or a graphql-ws error
// message's payload (a list of errors).
func toldOf(t *testing.T, body []byte) told {
	t.Helper()
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		var errs []testutil.GQLError
		if err := json.Unmarshal(body, &errs); err != nil || len(errs) == 0 {
			t.Fatalf("an error message without errors: %s", body)
		}
		code, _ := errs[0].Extensions["code"].(string)
		return told{code: code}
	}
	var r struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []testutil.GQLError        `json:"errors"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, body)
	}
	out := told{}
	for _, d := range r.Data {
		out.data = d
	}
	if len(r.Errors) > 0 {
		out.code, _ = r.Errors[0].Extensions["code"].(string)
	}
	out.ok = len(r.Errors) == 0 && len(out.data) > 0 && string(out.data) != "null"
	return out
}

// TestIdempotencyKeyWhereNotHonoured: a transport that cannot honour an
// Idempotency-Key refuses it, or the operation, before anything runs.
func TestIdempotencyKeyWhereNotHonoured(t *testing.T) {
	env := testutil.New(t)
	sys := privacy.DecisionContext(context.Background(), privacy.Allow)
	rows := []struct {
		name    string
		req     testutil.Request
		status  int
		code    string
		field   string
		created string
	}{
		{name: "a WebSocket upgrade with a key", status: 400, code: "VALIDATION_ERROR", field: "Idempotency-Key",
			req: testutil.Request{Method: "GET", Path: "/graphql", Token: env.Alice.Token, Headers: map[string]string{
				"Idempotency-Key": "ws-1", "Connection": "Upgrade", "Upgrade": "websocket",
				"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "graphql-transport-ws"}}},
		{name: "a mutation over GET with a key", status: 405, code: "METHOD_NOT_ALLOWED", created: "over get",
			req: testutil.Request{Method: "GET", Token: env.Alice.Token, Headers: map[string]string{"Idempotency-Key": "get-1"},
				Path: `/graphql?query=mutation%7BcreateItem(input:%7Bname:%22over%20get%22%7D)%7Bid%7D%7D`}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			res := env.Do(row.req)
			r := testutil.DecodeGQL(t, res)
			if r.Status != row.status || r.Code() != row.code {
				t.Fatalf("%d %q, want %d %q: %s", r.Status, r.Code(), row.status, row.code, r.Raw)
			}
			if row.field != "" && r.Errors[0].Extensions["field"] != row.field {
				t.Errorf("field %v, want %q", r.Errors[0].Extensions["field"], row.field)
			}
			if row.created != "" {
				if n, err := env.App.DB.Client.Item.Query().Where(item.Name(row.created)).Count(sys); err != nil || n != 0 {
					t.Errorf("%d items named %q (%v), want none", n, row.created, err)
				}
			}
		})
	}
}
