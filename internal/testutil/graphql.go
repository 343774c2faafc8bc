package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// GQLResponse is a decoded GraphQL response.
type GQLResponse struct {
	Status int
	Raw    []byte
	Data   map[string]any `json:"data"`
	Errors []GQLError     `json:"errors"`
	// Extensions is the response's extensions (cost).
	Extensions map[string]any `json:"extensions"`
}

// GQLError is one error of a GraphQL response.
type GQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// GQL posts one operation to /graphql through the real router.
func GQL(t *testing.T, env *Env, token, query string, vars map[string]any) GQLResponse {
	t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	res := env.Do(Request{Method: "POST", Path: "/graphql", Token: token, Body: body})
	return DecodeGQL(t, res)
}

// DecodeGQL decodes res as a GraphQL response, failing the test unless it
// is JSON.
func DecodeGQL(t *testing.T, res *Response) GQLResponse {
	t.Helper()
	r := GQLResponse{Status: res.Status, Raw: res.Body}
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatalf("response is not JSON (%d): %v\n%s", res.Status, err, res.Body)
	}
	return r
}

// Code is extensions.code of the first error, or "".
func (r GQLResponse) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// OK fails the test unless the response has no errors.
func (r GQLResponse) OK(t *testing.T) GQLResponse {
	t.Helper()
	if r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("status %d, errors: %s", r.Status, r.Raw)
	}
	return r
}

// At walks the data along keys (strings for objects, ints for lists).
func (r GQLResponse) At(t *testing.T, keys ...any) any {
	t.Helper()
	var v any = r.Data
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no object at %v in %s", k, r.Raw)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no list element %d in %s", k, r.Raw)
			}
			v = l[k]
		}
	}
	return v
}

// IDs returns the node ids of a connection at keys.
func (r GQLResponse) IDs(t *testing.T, keys ...any) []string {
	t.Helper()
	edges, _ := r.At(t, append(keys, "edges")...).([]any)
	out := []string{}
	for _, e := range edges {
		n := e.(map[string]any)["node"].(map[string]any)
		out = append(out, n["id"].(string))
	}
	return out
}

// MustJSON decodes b into v, failing the test unless it can.
func MustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

// PostSSE sends an operation to srv over Server-Sent Events (POST, Accept:
// text/event-stream), with token unless it is empty; the caller closes the
// response's body.
func PostSSE(ctx context.Context, t *testing.T, srv *httptest.Server, token, query string, vars map[string]any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
