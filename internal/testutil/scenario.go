package testutil

import (
	"bytes"
	"testing"
)

// Scenario is one row of an API test: a request, and what must come back.
type Scenario struct {
	Name    string
	Method  string
	Path    string
	Token   string
	Body    any
	Headers map[string]string

	Status      int               // expected HTTP status
	Code        string            // expected error.code ("" for a success)
	Contains    []string          // substrings the body must contain
	NotContains []string          // substrings the body must not contain
	HeaderIs    map[string]string // response headers that must equal these
	Check       func(t *testing.T, r *Response)
}

// Run runs each scenario as a subtest against env.
func Run(t *testing.T, env *Env, scenarios []Scenario) {
	t.Helper()
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			r := env.Do(Request{Method: s.Method, Path: s.Path, Token: s.Token, Body: s.Body, Headers: s.Headers})
			s.Assert(t, r)
		})
	}
}

// Assert checks a response against the scenario's expectations.
func (s Scenario) Assert(t *testing.T, r *Response) {
	t.Helper()
	if r.Status != s.Status {
		t.Fatalf("status = %d, want %d\n%s", r.Status, s.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q, want JSON", ct)
	}
	env := r.JSON(t)
	wantSuccess := s.Status < 400
	if env["success"] != wantSuccess {
		t.Errorf("success = %v, want %v\n%s", env["success"], wantSuccess, r.Body)
	}
	meta, _ := env["meta"].(map[string]any)
	if meta == nil || meta["timestamp"] == nil || meta["request_id"] == nil {
		t.Errorf("meta lacks timestamp or request_id: %s", r.Body)
	}
	if !wantSuccess {
		e, _ := env["error"].(map[string]any)
		if e == nil {
			t.Fatalf("failure without error object: %s", r.Body)
		}
		if _, ok := e["details"].(map[string]any); !ok {
			t.Errorf("error.details is not an object: %s", r.Body)
		}
		if msg, _ := e["message"].(string); msg == "" {
			t.Errorf("error.message is empty: %s", r.Body)
		}
	}
	if got := r.ErrorCode(); got != s.Code {
		t.Errorf("error.code = %q, want %q\n%s", got, s.Code, r.Body)
	}
	for _, sub := range s.Contains {
		if !bytes.Contains(r.Body, []byte(sub)) {
			t.Errorf("body lacks %q\n%s", sub, r.Body)
		}
	}
	for _, sub := range s.NotContains {
		if bytes.Contains(r.Body, []byte(sub)) {
			t.Errorf("body contains %q\n%s", sub, r.Body)
		}
	}
	for k, v := range s.HeaderIs {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if s.Check != nil {
		s.Check(t, r)
	}
}
