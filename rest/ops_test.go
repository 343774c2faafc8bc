package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
	"github.com/acme/itemsvc/web"
)

func TestHealthAndReadiness(t *testing.T) {
	env := testutil.New(t)
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "healthz needs no token", Method: "GET", Path: "/healthz", Status: 200, Contains: []string{`"status":"ok"`}},
		{Name: "readyz with the database up", Method: "GET", Path: "/readyz", Status: 200, Contains: []string{`"status":"ready"`}},
		{Name: "healthz ignores a bad token", Method: "GET", Path: "/healthz", Token: "junk", Status: 200},
	})
}

// TestReadinessWhenDatabaseGone takes the database away in each way it can
// go: the pool closed under the server, and (on PostgreSQL) the server
// unreachable on the network. /readyz must say 503 UNAVAILABLE, /healthz
// must still say the process is alive.
func TestReadinessWhenDatabaseGone(t *testing.T) {
	cases := []struct {
		name     string
		postgres bool // needs a database reached over the network
		setup    func(t *testing.T, cfg *config.Config) (takeAway func())
	}{
		{name: "pool closed", setup: func(t *testing.T, cfg *config.Config) func() { return nil }},
		{name: "server unreachable", postgres: true, setup: func(t *testing.T, cfg *config.Config) func() {
			p := newOutageProxy(t, "127.0.0.1:5432")
			cfg.DatabaseURL = strings.Replace(cfg.DatabaseURL, "127.0.0.1:5432", p.addr(), 1)
			return p.close
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.postgres && !testutil.OnPostgres() {
				t.Skip("needs TEST_DATABASE_URL (PostgreSQL over TCP)")
			}
			var takeAway func()
			env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { takeAway = tc.setup(t, c) }))
			if takeAway == nil {
				takeAway = func() { env.App.DB.SQL.Close() }
			}
			testutil.Run(t, env, []testutil.Scenario{{Name: "ready before", Method: "GET", Path: "/readyz", Status: 200}})
			takeAway()
			testutil.Run(t, env, []testutil.Scenario{
				{Name: "not ready", Method: "GET", Path: "/readyz", Status: 503, Code: "UNAVAILABLE",
					NotContains: []string{"sql:", "dial", "5432"}},
				{Name: "still alive", Method: "GET", Path: "/healthz", Status: 200},
			})
		})
	}
}

func TestMetricsMoveAfterRequests(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "counted")
	before := env.Scrape()
	for range 3 {
		env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token})
	}
	env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Bob.Token})
	env.Do(testutil.Request{Method: "GET", Path: "/v1/no/such/route/item_123"})
	after := env.Scrape()

	route := map[string]string{"route": "/v1/items/:id", "method": "GET"}
	cases := []struct {
		name   string
		family string
		labels map[string]string
		delta  float64
	}{
		{"200 by route template", "http_requests_total", with(route, "status", "200"), 3},
		{"403 by route template", "http_requests_total", with(route, "status", "403"), 1},
		{"unknown routes in one series", "http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}, 1},
		{"latency histogram", "http_request_duration_seconds", route, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := after.Value(tc.family, tc.labels) - before.Value(tc.family, tc.labels); got != tc.delta {
				t.Errorf("%s%v moved by %v, want %v", tc.family, tc.labels, got, tc.delta)
			}
		})
	}
	// Each family is exported with its type, so that Prometheus treats
	// counters as counters (rate()) and reads histogram buckets.
	for family, typ := range map[string]dto.MetricType{
		"http_requests_total":                  dto.MetricType_COUNTER,
		"http_request_duration_seconds":        dto.MetricType_HISTOGRAM,
		"http_requests_in_flight":              dto.MetricType_GAUGE,
		"go_sql_open_connections":              dto.MetricType_GAUGE,
		"go_sql_wait_count_total":              dto.MetricType_COUNTER,
		"itemsvc_ratelimit_fail_open_total":    dto.MetricType_COUNTER,
		"itemsvc_webhook_queue_depth":          dto.MetricType_GAUGE,
		"itemsvc_event_fanout_latency_seconds": dto.MetricType_HISTOGRAM,
		"go_goroutines":                        dto.MetricType_GAUGE,
		"process_start_time_seconds":           dto.MetricType_GAUGE,
	} {
		if !after.Has(family) {
			t.Errorf("/metrics lacks %s", family)
		} else if got := after[family].GetType(); got != typ {
			t.Errorf("%s has type %v, want %v", family, got, typ)
		}
	}
	for name := range after {
		if strings.Contains(name, "item_") {
			t.Errorf("raw path leaked into a metric name: %s", name)
		}
	}
	for _, m := range after["http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), "item_") {
				t.Errorf("raw path in a label: %s=%s", l.GetName(), l.GetValue())
			}
		}
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}

func TestSecurityHeadersAndRequestID(t *testing.T) {
	env := testutil.New(t)
	jsonAPI := map[string]string{
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
		// Plain HTTP here: HSTS only over TLS (cmd/server tests that side).
		"Strict-Transport-Security": "",
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "success", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token, Status: 200, HeaderIs: jsonAPI},
		{Name: "failure", Method: "GET", Path: "/v1/users/me", Status: 401, Code: "UNAUTHORIZED", HeaderIs: jsonAPI},
		{Name: "caller's request id is echoed", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token,
			Headers: map[string]string{"X-Request-ID": "req-123.abc_DEF"}, Status: 200,
			HeaderIs: map[string]string{"X-Request-ID": "req-123.abc_DEF"}, Contains: []string{`"request_id":"req-123.abc_DEF"`}},
		{Name: "unsafe request id is replaced", Method: "GET", Path: "/healthz",
			Headers: map[string]string{"X-Request-ID": "bad id\"<script>"}, Status: 200, NotContains: []string{"script"},
			Check: func(t *testing.T, r *testutil.Response) {
				id := r.Header.Get("X-Request-ID")
				if id == "" || !strings.Contains(string(r.Body), `"request_id":"`+id+`"`) {
					t.Errorf("generated id %q not echoed in meta: %s", id, r.Body)
				}
			}},
		{Name: "not a sandbox", Method: "GET", Path: "/healthz", Status: 200, HeaderIs: map[string]string{"X-Environment": ""}},
	})
}

func TestCORS(t *testing.T) {
	const app, other = "https://app.example.com", "https://evil.example.com"
	preflight := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"}
	}
	cases := []struct {
		name     string
		origins  []string
		method   string
		headers  map[string]string
		status   int
		want     map[string]string
		contains string
	}{
		{name: "preflight from an allowed origin", origins: []string{app + "/"}, method: "OPTIONS", headers: preflight(app), status: 204,
			want: map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS",
				"Access-Control-Allow-Headers": "Authorization, Content-Type, X-Request-ID, If-Match, If-None-Match, Idempotency-Key", "Access-Control-Allow-Credentials": ""}},
		{name: "preflight from another origin", origins: []string{app}, method: "OPTIONS", headers: preflight(other), status: 405,
			want: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "request from an allowed origin", origins: []string{app}, method: "GET", headers: map[string]string{"Origin": app}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": app,
				"Access-Control-Expose-Headers": "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-ID, Location, ETag, Idempotent-Replayed"}},
		{name: "request from another origin", origins: []string{app}, method: "GET", headers: map[string]string{"Origin": other}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{name: "any origin", origins: []string{"*"}, method: "GET", headers: map[string]string{"Origin": other}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": "*"}},
		{name: "CORS off by default", method: "OPTIONS", headers: preflight(app), status: 405,
			want: map[string]string{"Access-Control-Allow-Origin": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.CORSOrigins = tc.origins }))
			token := ""
			if tc.method == "GET" {
				token = env.Alice.Token
			}
			r := env.Do(testutil.Request{Method: tc.method, Path: "/v1/items", Token: token, Headers: tc.headers})
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			for k, v := range tc.want {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestOpenAPIDocumentAndDocs(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/openapi.json"})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("openapi.json: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	for _, p := range []string{"/auth/login", "/users/me", "/items", "/items/{id}", "/webhooks", "/webhooks/{id}", "/webhooks/{id}/rotate-secret",
		"/webhooks/{id}/deliveries", "/webhooks/{id}/deliveries/{delivery_id}/retry", "/openapi.json"} {
		if doc.Paths[p] == nil {
			t.Errorf("document lacks %s", p)
		}
	}
	page := env.Do(testutil.Request{Method: "GET", Path: "/docs"})
	if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(page.Body, []byte(`spec-url="/v1/openapi.json"`)) {
		t.Errorf("/docs: %d %s\n%s", page.Status, page.Header.Get("Content-Type"), page.Body)
	}
	if csp := page.Header.Get("Content-Security-Policy"); csp != web.DocsCSP {
		t.Errorf("/docs CSP = %q, want web.DocsCSP (Redoc from this server)", csp)
	}
}

// TestAssetsRoute: the pages' scripts come from the binary through the
// router, cacheable; an unknown asset is the API's 404.
func TestAssetsRoute(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "GET", Path: "/assets/playground.js"})
	if r.Status != 200 || !bytes.Contains(r.Body, []byte("sessionStorage")) {
		t.Fatalf("/assets/playground.js: %d %.100s", r.Status, r.Body)
	}
	for k, v := range map[string]string{"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "unknown asset", Method: "GET", Path: "/assets/nope.js", Status: 404, Code: "NOT_FOUND"},
		{Name: "no listing", Method: "GET", Path: "/assets/", Status: 404, Code: "NOT_FOUND"},
	})
}

// TestFaviconRoute: the icon a browser asks for on every page load is the
// binary's, not a 404.
func TestFaviconRoute(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "GET", Path: "/favicon.ico"})
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/x-icon" || !bytes.HasPrefix(r.Body, []byte{0, 0, 1, 0}) {
		t.Fatalf("/favicon.ico: %d %q %.8x", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// TestAccessLog reads the JSON log of real requests: one line each, with the
// request id, route template, status and user, and never a key or token.
func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	cfg := testutil.Config(t)
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewJSONHandler(&buf, nil)), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	k, err := a.Service.CreateKey(context.Background(), "log@example.com", "Logger", false)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path, token, body, reqID string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", reqID)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		a.Handler.ServeHTTP(rec, req)
		testutil.AssertContract(t, method, path, req.Header, []byte(body),
			&testutil.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()})
		return rec
	}
	rec := send("POST", "/v1/auth/login", "", `{"api_key":"`+k.Key+`"}`, "login-1")
	var login struct {
		Data struct {
			AccessToken string `json:"access_token"`
		} `json:"data"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &login)
	token := login.Data.AccessToken
	send("GET", "/v1/items?user_id="+k.UserID, token, "", "list-1")
	send("GET", "/v1/users/me", "not-a-token", "", "bad-1")
	send("GET", "/healthz", "", "", "probe-1") // healthy probes: debug level only

	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		if m["msg"] == "request" {
			lines[m["request_id"].(string)] = m
		}
		for _, secret := range []string{k.Key, token, "not-a-token"} {
			if secret != "" && strings.Contains(l, secret) {
				t.Errorf("log line leaks a credential: %s", l)
			}
		}
	}
	cases := []struct {
		id, route string
		status    float64
		userID    any
	}{
		{"login-1", "/v1/auth/login", 200, nil},
		{"list-1", "/v1/items", 200, k.UserID},
		{"bad-1", "/v1/users/me", 401, nil},
	}
	for _, tc := range cases {
		l := lines[tc.id]
		if l == nil {
			t.Errorf("no access log line for %s in\n%s", tc.id, buf.String())
			continue
		}
		if l["route"] != tc.route || l["status"] != tc.status || l["user_id"] != tc.userID || l["duration_ms"] == nil {
			t.Errorf("%s: got %v, want route %s status %v user %v", tc.id, l, tc.route, tc.status, tc.userID)
		}
	}
	if len(lines) != len(cases) {
		t.Errorf("%d request lines, want %d", len(lines), len(cases))
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// outageProxy forwards connections to a database, until close cuts them all
// and refuses new ones: the database as a network outage leaves it.
type outageProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *outageProxy) addr() string { return p.ln.Addr().String() }

func (p *outageProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

func (p *outageProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestRouterWithoutOperations: the zero Options (no metrics registry, no
// readiness check) still serve health, and /metrics is simply absent.
func TestRouterWithoutOperations(t *testing.T) {
	env := testutil.New(t)
	h := rest.NewRouter(env.App.Service, rest.Options{})
	cases := []struct {
		path   string
		status int
	}{
		{"/healthz", 200},
		{"/readyz", 200},
		{"/metrics", 404},
		{"/v1/openapi.json", 200},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tc.path, nil)
		h.ServeHTTP(rec, req)
		if strings.HasPrefix(tc.path, "/v1/") {
			testutil.AssertContract(t, "GET", tc.path, req.Header, nil,
				&testutil.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()})
		}
		if rec.Code != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, rec.Code, tc.status)
		}
	}
}
