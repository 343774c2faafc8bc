package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/tracing"
)

// incoming is the traceparent a caller sends: the server must continue its
// trace.
const (
	incomingTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	incomingParent = "00f067aa0ba902b7"
	incoming       = "00-" + incomingTrace + "-" + incomingParent + "-01"
)

// tracedApp is a server wired with tr (nil: tracing off), its log lines
// collected as JSON objects.
type tracedApp struct {
	*app.App
	mu   sync.Mutex
	logs bytes.Buffer
}

func newTracedApp(t *testing.T, tr *tracing.Tracing) *tracedApp {
	t.Helper()
	cfg := testutil.Config(t)
	cfg.WebhookAllowPrivate = true
	cfg.DatabaseBatchWindow = 0 // BEGIN and COMMIT in the request's trace: cmd/server's TestTracesOverOTLP says why
	ta := &tracedApp{}
	var h slog.Handler = slog.NewJSONHandler(lockedWriter{ta}, nil)
	if tr != nil {
		h = tracing.LogHandler(h)
	}
	opts := app.Options{Tracing: tr}
	opts.Webhooks.PollInterval = 10 * time.Millisecond
	a, err := app.New(context.Background(), cfg, slog.New(h), opts)
	if err != nil {
		t.Fatalf("start app: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	ta.App = a
	return ta
}

type lockedWriter struct{ ta *tracedApp }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.ta.mu.Lock()
	defer w.ta.mu.Unlock()
	return w.ta.logs.Write(p)
}

// lines are the log lines written so far with the given msg.
func (ta *tracedApp) lines(t *testing.T, msg string) []map[string]any {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(ta.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (ta *tracedApp) token(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	k, err := ta.Service.CreateKey(ctx, "alice@example.com", "Alice", false)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ta.Service.Login(ctx, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

func (ta *tracedApp) do(t *testing.T, method, path, token string, body any, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	ta.Handler.ServeHTTP(rec, req)
	return rec
}

// receiver is a webhook endpoint that keeps the traceparent of each POST.
type receiver struct {
	srv *httptest.Server
	got chan string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: make(chan string, 16)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.got <- req.Header.Get("traceparent")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) wait(t *testing.T) string {
	t.Helper()
	select {
	case tp := <-r.got:
		return tp
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook receiver got no delivery")
		return ""
	}
}

// spanNamed waits for an ended span of that name and returns it.
func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	return spanIn(t, rec, name, trace.TraceID{})
}

// spanIn waits for an ended span of that name in trace id (any trace when
// id is zero) and returns it.
func spanIn(t *testing.T, rec *tracetest.SpanRecorder, name string, id trace.TraceID) sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, s := range rec.Ended() {
			if s.Name() == name && (!id.IsValid() || s.SpanContext().TraceID() == id) {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range rec.Ended() {
				names = append(names, s.Name())
			}
			t.Fatalf("no span %q in trace %s among %q", name, id, names)
		}
		time.Sleep(5 * time.Millisecond) // the spans end on the dispatcher's goroutines
	}
}

// TestTraceOfACreate follows one POST /v1/items carrying a traceparent: the
// request's span continues the caller's trace, its SQL statements are
// spans of it named by kind and table, its log line carries the trace id,
// and the webhook delivery it causes is a span linked to it whose HTTP
// request hands traceparent to the receiver.
func TestTraceOfACreate(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	ta := newTracedApp(t, tracing.New(tracing.Options{Processor: rec}))
	tok := ta.token(t)
	rcv := newReceiver(t)
	if w := ta.do(t, "POST", "/v1/webhooks", tok, map[string]any{"url": rcv.srv.URL}, nil); w.Code != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", w.Code, w.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ta.Start(ctx)

	w := ta.do(t, "POST", "/v1/items", tok, map[string]any{"name": "traced"}, map[string]string{"traceparent": incoming})
	if w.Code != http.StatusCreated {
		t.Fatalf("create item: %d %s", w.Code, w.Body)
	}
	got := rcv.wait(t)

	server := spanNamed(t, rec, "POST /v1/items")
	if server.SpanKind() != trace.SpanKindServer || server.SpanContext().TraceID().String() != incomingTrace || server.Parent().SpanID().String() != incomingParent {
		t.Errorf("request span: kind %v, trace %s, parent %s; want a server span continuing %s", server.SpanKind(), server.SpanContext().TraceID(), server.Parent().SpanID(), incoming)
	}
	for _, name := range []string{"INSERT items", "INSERT events", "BEGIN", "COMMIT"} {
		s := spanIn(t, rec, name, server.SpanContext().TraceID())
		if s.Parent().SpanID() != server.SpanContext().SpanID() {
			t.Errorf("span %q has parent %s, not the request's span", name, s.Parent().SpanID())
		}
		for _, a := range s.Attributes() {
			if strings.HasPrefix(string(a.Key), "db.query") || a.Key == "db.statement" {
				t.Errorf("span %q carries the statement: %s", name, a.Key)
			}
		}
	}

	delivery := spanNamed(t, rec, "webhook delivery")
	linked := false
	for _, l := range delivery.Links() {
		linked = linked || l.SpanContext.TraceID() == server.SpanContext().TraceID()
	}
	if !linked {
		t.Errorf("the delivery span's links %v do not reach the request's trace %s", delivery.Links(), server.SpanContext().TraceID())
	}
	client := spanNamed(t, rec, "HTTP POST")
	if client.SpanKind() != trace.SpanKindClient || client.Parent().SpanID() != delivery.SpanContext().SpanID() {
		t.Errorf("webhook request span: kind %v, parent %s; want a client span under the delivery %s", client.SpanKind(), client.Parent().SpanID(), delivery.SpanContext().SpanID())
	}
	want := "00-" + client.SpanContext().TraceID().String() + "-" + client.SpanContext().SpanID().String() + "-01"
	if got != want {
		t.Errorf("receiver got traceparent %q, want %q", got, want)
	}

	lines := ta.lines(t, "request")
	found := false
	for _, l := range lines {
		if l["route"] == "/v1/items" {
			found = true
			if l["trace_id"] != incomingTrace || l["span_id"] != server.SpanContext().SpanID().String() {
				t.Errorf("access log line %v: want trace_id %s, span_id %s", l, incomingTrace, server.SpanContext().SpanID())
			}
		}
	}
	if !found {
		t.Errorf("no access log line for /v1/items among %v", lines)
	}
}

// TestTracingOffInstallsNothing: without tracing the router has no tracing
// middleware, the pool's driver is not wrapped, the global provider is not
// the SDK's and log lines carry no trace ids, even for a request that sends
// a traceparent. With tracing on the same checks see each part installed,
// so they can fail; and with a sampler that never samples the pool stays
// unwrapped and otelgin gives way to a middleware that only passes the
// caller's trace context on (the log lines still carry its trace id).
func TestTracingOffInstallsNothing(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		tr                       *tracing.Tracing
		otelgin, propagate, sqlW bool
	}{
		{"off", nil, false, false, false},
		{"on", tracing.New(tracing.Options{Processor: tracetest.NewSpanRecorder()}), true, false, true},
		{"never samples", tracing.New(tracing.Options{Sampler: sdktrace.NeverSample(), Never: true}), false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ta := newTracedApp(t, tc.tr)
			if got := hasMiddleware(t, ta.Handler, "otelgin"); got != tc.otelgin {
				t.Errorf("otelgin installed: %v, want %v", got, tc.otelgin)
			}
			if got := hasMiddleware(t, ta.Handler, "tracing.(*Tracing).propagate"); got != tc.propagate {
				t.Errorf("propagating middleware installed: %v, want %v", got, tc.propagate)
			}
			if got := tracing.Traced(ta.DB.SQL); got != tc.sqlW {
				t.Errorf("driver wrapped: %v, want %v", got, tc.sqlW)
			}
			if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
				t.Error("the global tracer provider is the SDK's; app.New must leave the globals alone")
			}
			tok := ta.token(t)
			if w := ta.do(t, "GET", "/v1/items", tok, nil, map[string]string{"traceparent": incoming}); w.Code != http.StatusOK {
				t.Fatalf("list: %d %s", w.Code, w.Body)
			}
			for _, l := range ta.lines(t, "request") {
				id, ok := l["trace_id"]
				if ok == (tc.tr == nil) {
					t.Errorf("log line %v: trace_id present %v, tracing on %v", l, ok, tc.tr != nil)
				}
				if ok && id != incomingTrace {
					t.Errorf("log line %v: trace_id %v, want the caller's %s", l, id, incomingTrace)
				}
			}
		})
	}
}

// hasMiddleware reports whether the engine runs a global handler from a
// package whose path contains pkg.
func hasMiddleware(t *testing.T, h http.Handler, pkg string) bool {
	e, ok := h.(*gin.Engine)
	if !ok {
		t.Fatalf("handler is a %T, not the gin engine", h)
	}
	for _, f := range e.Handlers {
		if strings.Contains(runtime.FuncForPC(funcPC(f)).Name(), pkg) {
			return true
		}
	}
	return false
}

func funcPC(f gin.HandlerFunc) uintptr { return reflect.ValueOf(f).Pointer() }

// TestGraphQLOperationSpans: each GraphQL operation is a span under its HTTP
// request's, named by its type and name, with the price it was charged and
// the codes of its errors; the SQL of a mutation is under it. An operation
// refused before it runs has its span too.
func TestGraphQLOperationSpans(t *testing.T) {
	for _, tc := range []struct {
		name, query, span string
		points            int64
		codes             []string
		sql               string // a span under the operation's
	}{
		{name: "mutation", query: `mutation MakeOne { createItem(input: {name: "traced"}) { id } }`, span: "mutation MakeOne", points: 1, sql: "INSERT items"},
		{name: "query", query: `query Mine { items(first: 5) { totalCount edges { node { id } } } }`, span: "query Mine", points: 1, sql: "SELECT items"},
		{name: "invalid input", query: `mutation Empty { createItem(input: {name: " "}) { id } }`, span: "mutation Empty", points: 1, codes: []string{"VALIDATION_ERROR"}},
		{name: "refused before it runs", query: `query Broken { nosuchfield }`, span: "query Broken", codes: []string{"VALIDATION_ERROR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			ta := newTracedApp(t, tracing.New(tracing.Options{Processor: rec}))
			tok := ta.token(t)
			w := ta.do(t, "POST", "/graphql", tok, map[string]any{"query": tc.query}, map[string]string{"traceparent": incoming})
			if w.Code >= 500 {
				t.Fatalf("graphql: %d %s", w.Code, w.Body)
			}
			server := spanIn(t, rec, "POST /graphql", mustTraceID(t, incomingTrace))
			op := spanIn(t, rec, tc.span, server.SpanContext().TraceID())
			if op.Parent().SpanID() != server.SpanContext().SpanID() {
				t.Errorf("operation span's parent %s, want the request's %s", op.Parent().SpanID(), server.SpanContext().SpanID())
			}
			attrs := map[string]attribute.Value{}
			for _, a := range op.Attributes() {
				attrs[string(a.Key)] = a.Value
			}
			if tc.points > 0 && attrs["graphql.operation.price.points"].AsInt64() != tc.points {
				t.Errorf("price %v, want %d points (attributes %v)", attrs["graphql.operation.price.points"].String(), tc.points, op.Attributes())
			}
			if got := attrs["graphql.error.codes"].AsStringSlice(); !slices.Equal(got, tc.codes) {
				t.Errorf("error codes %q, want %q (body %s)", got, tc.codes, w.Body)
			}
			if (op.Status().Code == codes.Error) != (len(tc.codes) > 0) {
				t.Errorf("status %v with error codes %q", op.Status(), tc.codes)
			}
			if tc.sql != "" {
				if s := spanIn(t, rec, tc.sql, op.SpanContext().TraceID()); s.Parent().SpanID() != op.SpanContext().SpanID() {
					t.Errorf("span %q is not under the operation's span", tc.sql)
				}
			}
		})
	}
}

func mustTraceID(t *testing.T, s string) trace.TraceID {
	id, err := trace.TraceIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestMalformedTraceparent: a traceparent that is not W3C's is ignored, as
// the specification says: the request is served and starts a trace of its
// own; a well-formed one is continued.
func TestMalformedTraceparent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	ta := newTracedApp(t, tracing.New(tracing.Options{Processor: rec}))
	tok := ta.token(t)
	for _, tc := range []struct {
		name, header string
		continued    bool
	}{
		{"well formed", incoming, true},
		{"garbage", "not-a-traceparent", false},
		{"short trace id", "00-4bf92f3577b34da6-00f067aa0ba902b7-01", false},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"version ff", "ff-" + incomingTrace + "-" + incomingParent + "-01", false},
		{"upper case", "00-" + strings.ToUpper(incomingTrace) + "-" + incomingParent + "-01", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			w := ta.do(t, "GET", "/v1/items", tok, nil, map[string]string{"traceparent": tc.header})
			if w.Code != http.StatusOK {
				t.Fatalf("list with traceparent %q: %d %s", tc.header, w.Code, w.Body)
			}
			var server sdktrace.ReadOnlySpan
			for _, s := range rec.Ended()[before:] {
				if s.Name() == "GET /v1/items" {
					server = s
				}
			}
			if server == nil {
				t.Fatal("no span of the request")
			}
			continued := server.Parent().IsRemote() && server.SpanContext().TraceID().String() == incomingTrace
			if continued != tc.continued || !server.SpanContext().IsValid() {
				t.Errorf("traceparent %q: continued %v (parent %v), want %v", tc.header, continued, server.Parent(), tc.continued)
			}
		})
	}
}

// TestDeliverySpanRedactsURL: a webhook URL carrying credentials (a user
// and password, a ?token=) is delivered to as it is, but the delivery's
// client span records url.full with them redacted (REDACTED, query names
// kept), and no span attribute, span event or log line holds them.
func TestDeliverySpanRedactsURL(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	ta := newTracedApp(t, tracing.New(tracing.Options{Processor: rec}))
	tok := ta.token(t)
	got := make(chan *http.Request, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got <- req
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	const user, pass, token = "hookuser", "pa55w0rd", "t0ken-s3cret"
	hook := strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/in?token=" + token + "&v=2"
	if w := ta.do(t, "POST", "/v1/webhooks", tok, map[string]any{"url": hook}, nil); w.Code != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", w.Code, w.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ta.Start(ctx)
	if w := ta.do(t, "POST", "/v1/items", tok, map[string]any{"name": "traced"}, nil); w.Code != http.StatusCreated {
		t.Fatalf("create item: %d %s", w.Code, w.Body)
	}
	var req *http.Request
	select {
	case req = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook receiver got no delivery")
	}
	if u, p, _ := req.BasicAuth(); u != user || p != pass || req.URL.Query().Get("token") != token {
		t.Errorf("the receiver got user %q, password %q, token %q: the request must keep its credentials", u, p, req.URL.Query().Get("token"))
	}

	client := spanNamed(t, rec, "HTTP POST")
	want := "http://REDACTED:REDACTED@" + strings.TrimPrefix(srv.URL, "http://") + "/in?token=REDACTED&v=REDACTED"
	full := ""
	for _, a := range client.Attributes() {
		if a.Key == "url.full" {
			full = a.Value.String()
		}
	}
	if full != want {
		t.Errorf("url.full = %q, want %q", full, want)
	}
	for _, s := range rec.Ended() {
		var texts []string
		for _, a := range s.Attributes() {
			texts = append(texts, a.Value.String())
		}
		for _, e := range s.Events() {
			for _, a := range e.Attributes {
				texts = append(texts, a.Value.String())
			}
		}
		texts = append(texts, s.Status().Description)
		for _, text := range texts {
			for _, secret := range []string{pass, token} {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries %q: %s", s.Name(), secret, text)
				}
			}
		}
	}
	ta.mu.Lock()
	logs := ta.logs.String()
	ta.mu.Unlock()
	for _, secret := range []string{pass, token} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q:\n%s", secret, logs)
		}
	}
}
