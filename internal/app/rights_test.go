package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestRightsAtEveryUse: a credential's rights are read at every use, never
// kept from the moment something opened (DESIGN §10). For each credential
// change, a subject (an admin, so that narrowing shows) opens every place
// of use first: sockets signed in by the upgrade's header and by
// connection_init on both WebSocket protocols, subscriptions over REST's
// SSE, GraphQL's SSE and both WebSocket protocols, a webhook endpoint, and
// an Idempotency-Key record on each API. Then the change is made, and every
// place must give the documented outcome (docs/administration.md, "Rights
// at every use"):
//
//   - a request or operation: the code REST gives the same token;
//   - a stream: "ended CODE", or "narrowed" (the user's own items' events
//     only), or "all";
//   - a webhook endpoint: "all", "narrowed" or "none";
//   - a replay: the code the request itself would get now.
//
// Before, sockets signed in by header kept every right, streams kept the
// admin role they opened with, a disabled admin's endpoint kept receiving
// every user's events, and a GraphQL replay skipped the scope check.
func TestRightsAtEveryUse(t *testing.T) {
	type outcomes map[string]string
	const (
		unauthorized = "UNAUTHORIZED"
		expired      = "TOKEN_EXPIRED"
		denied       = "PERMISSION_DENIED"
	)
	// ended is a stream's outcome when it ends with a code.
	ended := func(code string) string { return "ended " + code }
	same := func(request, stream, webhook string) outcomes {
		return outcomes{
			"REST request": request, "REST SSE": stream,
			"GraphQL POST": request, "GraphQL GET": request, "GraphQL SSE": stream,
			"graphql-transport-ws header": request, "graphql-transport-ws init": request,
			"graphql-ws header": request, "graphql-ws init": request,
			"open subscription graphql-transport-ws header": stream,
			"open subscription graphql-ws init":             stream,
			"webhook":                                       webhook,
			"replay REST":                                   request, "replay GraphQL": request,
		}
	}
	readOnly := same(denied, "all", "all")
	readOnly["GraphQL GET"] = "ok" // GET serves queries, which a read-only key may send

	rows := []struct {
		change string
		want   outcomes
	}{
		{"revoke", same(unauthorized, ended(unauthorized), "all")},
		{"disable", same(unauthorized, ended(unauthorized), "none")},
		{"expire", same(expired, ended(expired), "all")},
		{"demote", same(denied, "narrowed", "narrowed")},
		// The same changes made by another replica (straight in the
		// database, which this server's key cache does not hear of):
		// they hold within the key recheck.
		{"disable elsewhere", same(unauthorized, ended(unauthorized), "none")},
		{"demote elsewhere", same(denied, "narrowed", "narrowed")},
		{"read-only scope", readOnly},
	}
	for _, row := range rows {
		t.Run(row.change, func(t *testing.T) {
			got := rightsAfter(t, row.change)
			for place, want := range row.want {
				if got[place] != want {
					t.Errorf("%s: %q, want %q", place, got[place], want)
				}
			}
		})
	}
}

// keyRecheck is the test servers' KeyRecheck.
const keyRecheck = 200 * time.Millisecond

// rightsAfter opens every place of use as the subject, makes the change,
// and returns the outcome at each place.
func rightsAfter(t *testing.T, change string) map[string]string {
	env := testutil.New(t,
		testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }),
		testutil.WithAppOptions(func(o *app.Options) {
			// A change made in the database (by another replica, or an
			// expiry, which no API sets later) is seen within this; every
			// other change holds at once on the replica that made it.
			o.Service.KeyRecheck = keyRecheck
		}))
	env.App.Start(context.Background())
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	ctx := context.Background()

	var edit func(*ent.APIKeyUpdateOne) *ent.APIKeyUpdateOne
	if change == "read-only scope" {
		edit = testutil.ReadOnly
	}
	subject := env.NewKeyActor("sam@example.com", "Sam", true, edit)
	writer := subject // who made the keyed requests and the endpoint
	if edit != nil {
		writer = env.NewActor("sam@example.com", "Sam", true) // a write key of the same user
	}

	hooks := newReceiver(t)
	createWebhook(t, env, writer, hooks.url("/subject"))
	createWebhook(t, env, env.Admin, hooks.url("/marker"))

	// The requests each place sends after the change: what the change
	// takes away (an admin's list on demotion, a write on read-only).
	restProbe := testutil.Request{Method: "GET", Path: "/v1/items"}
	gqlProbe, getProbe := `{ me { id } }`, `{ me { id } }`
	replayREST := testutil.Request{Method: "POST", Path: "/v1/items", Body: map[string]any{"name": "keyed"}}
	replayGQL := `mutation { createItem(input: {name: "keyed"}) { id } }`
	switch change {
	case "demote", "demote elsewhere":
		restProbe = testutil.Request{Method: "GET", Path: "/v1/users"}
		gqlProbe, getProbe = `{ users(first: 1) { totalCount } }`, `{ users(first: 1) { totalCount } }`
		replayREST = testutil.Request{Method: "POST", Path: "/v1/users", Body: map[string]any{"email": "new@example.com", "name": "New"}}
		replayGQL = `mutation { createUser(input: {email: "new2@example.com", name: "New"}) { id } }`
	case "read-only scope":
		restProbe = testutil.Request{Method: "POST", Path: "/v1/items", Body: map[string]any{"name": "late"}}
		gqlProbe = `mutation { createItem(input: {name: "late"}) { id } }`
	}

	// The keyed requests, made before the change by the writer.
	keyedREST := replayREST
	keyedREST.Token, keyedREST.Headers = writer.Token, map[string]string{"Idempotency-Key": "rest-1"}
	if r := env.Do(keyedREST); r.Status != http.StatusCreated {
		t.Fatalf("keyed REST request: %d %s", r.Status, r.Body)
	}
	keyedGQL := gqlRequest(replayGQL, writer.Token, "gql-1")
	if r := env.Do(keyedGQL); r.Status != http.StatusOK || testutil.DecodeGQL(t, r).Code() != "" {
		t.Fatalf("keyed GraphQL request: %d %s", r.Status, r.Body)
	}

	// Sockets signed in before the change, and the streams.
	const events = `subscription { itemEvents { item { name } } }`
	sockets := map[string]*socketClient{}
	for _, name := range []string{"graphql-transport-ws header", "graphql-transport-ws init", "graphql-ws header", "graphql-ws init"} {
		sockets[name] = dialSocket(t, srv, strings.HasPrefix(name, "graphql-ws"), strings.HasSuffix(name, "header"), subject.Token)
	}
	streams := map[string]*observed{
		"REST SSE":    restSSE(t, srv, subject.Token),
		"GraphQL SSE": graphqlSSE(t, srv, subject.Token, events),
	}
	for name, socket := range map[string]*socketClient{
		"open subscription graphql-transport-ws header": dialSocket(t, srv, false, true, subject.Token),
		"open subscription graphql-ws init":             dialSocket(t, srv, true, false, subject.Token),
	} {
		streams[name] = socket.stream(t, events)
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool { return env.App.Events.Subscribers() == len(streams) }) {
		t.Fatalf("subscribers: %d, want %d", env.App.Events.Subscribers(), len(streams))
	}

	// The change.
	sys := service.System(ctx)
	switch change {
	case "revoke":
		if _, err := env.App.Service.RevokeKey(ctx, subject.KeyID); err != nil {
			t.Fatal(err)
		}
	case "disable":
		if _, err := env.App.Service.UpdateUser(sys, subject.UserID, service.UserChanges{Disabled: new(true)}); err != nil {
			t.Fatal(err)
		}
	case "demote":
		if _, err := env.App.Service.UpdateUser(sys, subject.UserID, service.UserChanges{Role: new("user")}); err != nil {
			t.Fatal(err)
		}
	case "disable elsewhere":
		if err := env.App.DB.Client.User.UpdateOneID(subject.UserID).SetDisabled(true).Exec(testutil.SystemContext(t)); err != nil {
			t.Fatal(err)
		}
	case "demote elsewhere":
		if err := env.App.DB.Client.User.UpdateOneID(subject.UserID).SetRole(user.RoleUser).Exec(testutil.SystemContext(t)); err != nil {
			t.Fatal(err)
		}
	case "expire":
		past := time.Now().Add(-time.Second)
		if err := env.App.DB.Client.APIKey.UpdateOneID(subject.KeyID).SetExpiresAt(past).Exec(testutil.SystemContext(t)); err != nil {
			t.Fatal(err)
		}
	}

	got := map[string]string{}
	rest := func() string {
		r := restProbe
		r.Token = subject.Token
		return outcomeOf(env.Do(r))
	}
	// Every change but a database edit holds at once; that one within
	// KeyRecheck: wait until REST sees it, then ask every other place.
	want := map[string]string{
		"revoke": "UNAUTHORIZED", "disable": "UNAUTHORIZED", "disable elsewhere": "UNAUTHORIZED",
		"expire": "TOKEN_EXPIRED", "demote": "PERMISSION_DENIED", "demote elsewhere": "PERMISSION_DENIED",
		"read-only scope": "PERMISSION_DENIED",
	}[change]
	testutil.Eventually(t, 5*time.Second, func() bool { return rest() == want })
	if strings.HasSuffix(change, "elsewhere") || change == "expire" {
		// A stream checks every KeyRecheck/2 with a key state at most
		// KeyRecheck/2 old: the window a change made elsewhere has to
		// reach it, which is the property under test.
		<-time.After(keyRecheck)
	}
	got["REST request"] = rest()
	got["GraphQL POST"] = gqlOutcome(t, env.Do(gqlRequest(gqlProbe, subject.Token, "")))
	get := testutil.Request{Method: "GET", Path: "/graphql?query=" + urlQuery(getProbe), Token: subject.Token}
	got["GraphQL GET"] = gqlOutcome(t, env.Do(get))
	for name, socket := range sockets {
		got[name] = socket.operation(t, gqlProbe)
	}
	replay := replayREST
	replay.Token, replay.Headers = subject.Token, map[string]string{"Idempotency-Key": "rest-1"}
	got["replay REST"] = outcomeOf(env.Do(replay))
	got["replay GraphQL"] = gqlOutcome(t, env.Do(gqlRequest(replayGQL, subject.Token, "gql-1")))

	// What the streams and the endpoint deliver from now on: another
	// user's item, then the subject's own, then (for the endpoint) a
	// marker that shows every earlier event has been fanned out.
	env.CreateItem(env.Bob, "other")
	own := viewer.NewContext(ctx, viewer.Viewer{UserID: subject.UserID, Role: viewer.RoleUser})
	if _, err := env.App.Service.CreateItem(own, ent.CreateItemInput{Name: "own"}); err != nil {
		t.Fatal(err)
	}
	env.CreateItem(env.Admin, "marker")
	for name, s := range streams {
		got[name] = s.outcome(t)
	}
	got["webhook"] = hooks.outcome(t, env)
	return got
}

// outcomeOf is a REST response's outcome: "ok" or its error code.
func outcomeOf(r *testutil.Response) string {
	if r.Status < 300 {
		return "ok"
	}
	return r.ErrorCode()
}

// gqlOutcome is a GraphQL response's outcome: "ok" or its first error's code.
func gqlOutcome(t *testing.T, r *testutil.Response) string {
	if code := testutil.DecodeGQL(t, r).Code(); code != "" {
		return code
	}
	return "ok"
}

// gqlRequest is a GraphQL POST, with an Idempotency-Key unless key is "".
func gqlRequest(query, token, key string) testutil.Request {
	r := testutil.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]any{"query": query}}
	if key != "" {
		r.Headers = map[string]string{"Idempotency-Key": key}
	}
	return r
}

// urlQuery escapes a GraphQL document for a GET's query string.
func urlQuery(q string) string {
	r := strings.NewReplacer(" ", "%20", "{", "%7B", "}", "%7D", "(", "%28", ")", "%29", ":", "%3A", ",", "%2C")
	return r.Replace(q)
}

// createWebhook registers url for as's items (an admin's: everyone's).
func createWebhook(t *testing.T, env *testutil.Env, as testutil.Actor, url string) {
	t.Helper()
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: as.Token, Body: map[string]any{"url": url}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
}

// observed is what a stream received: item names, or the code it ended with.
type observed struct {
	mu    sync.Mutex
	seen  []string
	event chan struct{}
}

func newObserved() *observed { return &observed{event: make(chan struct{}, 1)} }

// add records one observation: "item NAME" or "ended CODE".
func (o *observed) add(s string) {
	o.mu.Lock()
	o.seen = append(o.seen, s)
	o.mu.Unlock()
	select {
	case o.event <- struct{}{}:
	default:
	}
}

// outcome waits for the stream's answer to the change: it ended, or it
// delivered another user's item ("all") or only the subject's own
// ("narrowed": the own item, created after the other's, came first).
func (o *observed) outcome(t *testing.T) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		o.mu.Lock()
		seen := slices.Clone(o.seen)
		o.mu.Unlock()
		for _, s := range seen {
			switch {
			case strings.HasPrefix(s, "ended "):
				return s
			case s == "item other":
				return "all"
			case s == "item own":
				return "narrowed"
			}
		}
		select {
		case <-o.event:
		case <-deadline:
			return fmt.Sprintf("nothing within 10s (%v)", seen)
		}
	}
}

// restSSE opens GET /v1/events/stream.
func restSSE(t *testing.T, srv *httptest.Server, token string) *observed {
	req, _ := http.NewRequest("GET", srv.URL+"/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return readSSE(t, srv, req, func(event, data string, o *observed) {
		var body struct {
			Data struct{ Name string }
			Code string // the error event's
		}
		_ = json.Unmarshal([]byte(data), &body)
		if event == "error" {
			o.add("ended " + body.Code)
		} else {
			o.add("item " + body.Data.Name)
		}
	})
}

// graphqlSSE opens a subscription over GraphQL's Server-Sent Events.
func graphqlSSE(t *testing.T, srv *httptest.Server, token, query string) *observed {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest("POST", srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	return readSSE(t, srv, req, func(event, data string, o *observed) {
		if event == "next" {
			observeResult(json.RawMessage(data), o)
		}
	})
}

// readSSE sends req and hands each event to each.
func readSSE(t *testing.T, srv *httptest.Server, req *http.Request, each func(event, data string, o *observed)) *observed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := srv.Client().Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("%s %s: %d", req.Method, req.URL.Path, resp.StatusCode)
	}
	o := newObserved()
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		var event, data string
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "":
				if event != "" {
					each(event, data, o)
				}
				event, data = "", ""
			case strings.HasPrefix(line, "event: "):
				event = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			}
		}
	}()
	return o
}

// observeResult records a subscription's result: its item, or its error.
func observeResult(payload json.RawMessage, o *observed) {
	var r struct {
		Data struct {
			ItemEvents struct{ Item struct{ Name string } }
		}
		Errors []testutil.GQLError
	}
	_ = json.Unmarshal(payload, &r)
	if len(r.Errors) > 0 {
		code, _ := r.Errors[0].Extensions["code"].(string)
		o.add("ended " + code)
		return
	}
	o.add("item " + r.Data.ItemEvents.Item.Name)
}

// socketClient is a GraphQL WebSocket in either protocol:
// graphql-transport-ws, or the legacy graphql-ws.
type socketClient struct {
	ctx    context.Context
	conn   *websocket.Conn
	legacy bool
}

type socketMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialSocket opens a socket signed in with token: in the upgrade's
// Authorization header, or in connection_init's payload.
func dialSocket(t *testing.T, srv *httptest.Server, legacy, header bool, token string) *socketClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	proto := "graphql-transport-ws"
	if legacy {
		proto = "graphql-ws"
	}
	opts := &websocket.DialOptions{Subprotocols: []string{proto}, HTTPHeader: http.Header{}}
	init := map[string]any{}
	if header {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	} else {
		init["Authorization"] = "Bearer " + token
	}
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow(); cancel() })
	c := &socketClient{ctx: ctx, conn: conn, legacy: legacy}
	payload, _ := json.Marshal(init)
	c.send(t, socketMessage{Type: "connection_init", Payload: payload})
	if m, err := c.read(); err != nil || m.Type != "connection_ack" {
		t.Fatalf("%s: ack: %+v %v", proto, m, err)
	}
	return c
}

func (c *socketClient) send(t *testing.T, m socketMessage) {
	t.Helper()
	if err := wsjson.Write(c.ctx, c.conn, m); err != nil {
		t.Fatal(err)
	}
}

// read returns the next message that is not a keep-alive.
func (c *socketClient) read() (socketMessage, error) {
	for {
		var m socketMessage
		if err := wsjson.Read(c.ctx, c.conn, &m); err != nil {
			return m, err
		}
		switch m.Type {
		case "ka", "pong":
		case "ping":
			_ = wsjson.Write(c.ctx, c.conn, socketMessage{Type: "pong"})
		default:
			return m, nil
		}
	}
}

// start starts operation id.
func (c *socketClient) start(t *testing.T, id, query string) {
	payload, _ := json.Marshal(map[string]any{"query": query})
	typ := "subscribe"
	if c.legacy {
		typ = "start"
	}
	c.send(t, socketMessage{ID: id, Type: typ, Payload: payload})
}

// operation runs query and returns its outcome: "ok", or its error's code;
// a code that ends the credential must also close the socket 4403.
func (c *socketClient) operation(t *testing.T, query string) string {
	c.start(t, "op", query)
	for {
		m, err := c.read()
		if err != nil {
			return "no result: " + err.Error()
		}
		if m.ID != "op" {
			continue
		}
		var errs []testutil.GQLError
		switch m.Type {
		case "next", "data":
			var r struct{ Errors []testutil.GQLError }
			_ = json.Unmarshal(m.Payload, &r)
			errs = r.Errors
		case "error":
			_ = json.Unmarshal(m.Payload, &errs)
		default:
			continue
		}
		if len(errs) == 0 {
			return "ok"
		}
		code, _ := errs[0].Extensions["code"].(string)
		if code == "UNAUTHORIZED" || code == "TOKEN_EXPIRED" {
			if _, err := c.read(); websocket.CloseStatus(err) != 4403 {
				return code + " without close 4403: " + fmt.Sprint(err)
			}
		}
		return code
	}
}

// stream starts a subscription and records what it delivers.
func (c *socketClient) stream(t *testing.T, query string) *observed {
	c.start(t, "sub", query)
	o := newObserved()
	done := make(chan struct{})
	t.Cleanup(func() { c.conn.CloseNow(); <-done })
	go func() {
		defer close(done)
		for {
			m, err := c.read()
			if err != nil {
				return
			}
			switch m.Type {
			case "next", "data":
				observeResult(m.Payload, o)
			case "error":
				var errs []testutil.GQLError
				_ = json.Unmarshal(m.Payload, &errs)
				if len(errs) > 0 {
					code, _ := errs[0].Extensions["code"].(string)
					o.add("ended " + code)
				}
			}
		}
	}()
	return o
}

// receiver is a webhook receiver that records the item names each path got.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  map[string][]string
	hits chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string][]string{}, hits: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev struct{ Data struct{ Name string } }
		_ = json.Unmarshal(body, &ev)
		r.mu.Lock()
		r.got[req.URL.Path] = append(r.got[req.URL.Path], ev.Data.Name)
		r.mu.Unlock()
		select {
		case r.hits <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url(path string) string { return r.srv.URL + path }

func (r *receiver) names(path string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[path])
}

// outcome is what the subject's endpoint received of the items made after
// the change: once the marker reached the other admin's endpoint, every
// earlier event has been fanned out, and once none of the subject's
// deliveries is pending, every one due has been attempted.
func (r *receiver) outcome(t *testing.T, env *testutil.Env) string {
	t.Helper()
	if !testutil.Eventually(t, 15*time.Second, func() bool { return slices.Contains(r.names("/marker"), "marker") }) {
		return "the marker never arrived"
	}
	pending := func() bool {
		n, err := env.App.DB.Client.Delivery.Query().Where(delivery.StateEQ(delivery.StatePending), delivery.AttemptsEQ(0)).Count(testutil.SystemContext(t))
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !testutil.Eventually(t, 15*time.Second, func() bool { return !pending() }) {
		return "deliveries still pending"
	}
	got := r.names("/subject")
	switch {
	case slices.Contains(got, "other"):
		return "all"
	case slices.Contains(got, "own"):
		return "narrowed"
	}
	return "none"
}
