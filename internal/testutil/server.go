package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL schemas for tests
	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
)

// Actor is a user with a key and a fresh token.
type Actor struct {
	UserID string
	KeyID  string
	Key    string
	Token  string
}

// Env is a running server on its own database, with three actors.
type Env struct {
	T     testing.TB
	App   *app.App
	Admin Actor
	Alice Actor
	Bob   Actor

	contract     *Contract // loaded on the first /v1 request (openapi.go)
	contractOnce sync.Once // tests may send requests from several goroutines
}

// Option changes the configuration or wiring of an Env.
type Option func(*config.Config, *app.Options)

// WithConfig changes the configuration before the server is built.
func WithConfig(f func(*config.Config)) Option {
	return func(c *config.Config, _ *app.Options) { f(c) }
}

// WithAppOptions changes the wiring options.
func WithAppOptions(f func(*app.Options)) Option {
	return func(_ *config.Config, o *app.Options) { f(o) }
}

// Config returns the default configuration, as the binary would resolve it
// with no flags and no environment, on a test database.
func Config(t testing.TB) config.Config {
	t.Helper()
	var cfg config.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	l := cfg.Register(fs)
	if err := l.Resolve(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatalf("default config: %v", err)
	}
	cfg.DatabaseURL = DatabaseURL(t)
	if OnPostgres() {
		// PostgreSQL needs SECRET_KEY; SQLite tests use the key file a
		// first start makes beside the database, as a user's would.
		cfg.SecretKey = strings.Repeat("s", 32)
	}
	return cfg
}

// New starts a server on a fresh database with an admin, Alice and Bob.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	cfg := Config(t)
	var ao app.Options
	for _, o := range opts {
		o(&cfg, &ao)
	}
	if ao.RateLimitPrefix == "" {
		// Tests share one Redis: per-key counters cannot collide (key ids
		// are random), but failed logins and anonymous GraphQL are
		// counted per client address, the same loopback for every test.
		ao.RateLimitPrefix = "itemsvc:test:" + ulid.Make().String()
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(&testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	a, err := app.New(context.Background(), cfg, log, ao)
	if err != nil {
		t.Fatalf("start app: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	e := &Env{T: t, App: a}
	e.Admin = e.NewActor("admin@example.com", "Ada Admin", true)
	e.Alice = e.NewActor("alice@example.com", "Alice", false)
	e.Bob = e.NewActor("bob@example.com", "Bob", false)
	return e
}

// NewActor creates a user (or a new key of an existing one) and logs in.
func (e *Env) NewActor(email, name string, admin bool) Actor {
	e.T.Helper()
	k, err := e.App.Service.CreateKey(context.Background(), email, name, admin)
	if err != nil {
		e.T.Fatalf("create key for %s: %v", email, err)
	}
	tok, err := e.App.Service.Login(context.Background(), k.Key)
	if err != nil {
		e.T.Fatalf("login %s: %v", email, err)
	}
	return Actor{UserID: k.UserID, KeyID: k.KeyID, Key: k.Key, Token: tok.AccessToken}
}

// Response is a recorded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Data decodes the data of a success envelope into v.
func (r *Response) Data(t testing.TB, v any) {
	t.Helper()
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || !env.Success {
		t.Fatalf("not a success envelope (status %d): %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("decode data: %v\n%s", err, env.Data)
	}
}

// ErrorCode returns error.code of a failure envelope, or "".
func (r *Response) ErrorCode() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &env)
	return env.Error.Code
}

// Request describes one request; Body is sent as is when it is a string or
// []byte, JSON-encoded otherwise.
type Request struct {
	Method  string
	Path    string
	Token   string
	Body    any
	Headers map[string]string
}

// Do sends a request through the real router.
func (e *Env) Do(r Request) *Response {
	e.T.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.T.Fatalf("encode body: %v", err)
		}
		body = bytes.NewReader(data)
	}
	req := httptest.NewRequest(r.Method, r.Path, body)
	req.RemoteAddr = "192.0.2.1:1234"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return e.Serve(req)
}

// Serve sends a prepared request through the real router. Every exchange
// under /v1 is checked against the OpenAPI document (openapi.go).
func (e *Env) Serve(req *http.Request) *Response {
	var data []byte
	if req.Body != nil {
		// A test's own in-memory body; were it to fail, the contract check
		// would see the short body and say so.
		data, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(data))
	}
	rec := httptest.NewRecorder()
	e.App.Handler.ServeHTTP(rec, req)
	res := &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	e.checkContract(req, data, res)
	return res
}

// CreateItem creates an item as an actor through the API and returns its id.
func (e *Env) CreateItem(as Actor, name string) string {
	e.T.Helper()
	res := e.Do(Request{Method: "POST", Path: "/v1/items", Token: as.Token, Body: map[string]any{"name": name}})
	if res.Status != http.StatusCreated {
		e.T.Fatalf("create item: %d %s", res.Status, res.Body)
	}
	var it struct{ ID string }
	res.Data(e.T, &it)
	return it.ID
}

// Eventually polls cond until it holds or the timeout passes; it waits on
// something observable, never a fixed sleep.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(delay*2, 50*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

type testWriter struct{ t testing.TB }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
