package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// gqlResponse is a decoded GraphQL response.
type gqlResponse struct {
	Status int
	Raw    []byte
	Data   map[string]any `json:"data"`
	Errors []gqlError     `json:"errors"`
	// Extensions is the response's extensions (cost).
	Extensions map[string]any `json:"extensions"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// gql posts one operation to /graphql through the real router.
func gql(t *testing.T, env *testutil.Env, token, query string, vars map[string]any) gqlResponse {
	t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: token, Body: body})
	return decode(t, res)
}

func decode(t *testing.T, res *testutil.Response) gqlResponse {
	t.Helper()
	r := gqlResponse{Status: res.Status, Raw: res.Body}
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatalf("response is not JSON (%d): %v\n%s", res.Status, err, res.Body)
	}
	return r
}

// code is extensions.code of the first error, or "".
func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// ok fails the test unless the response has no errors.
func (r gqlResponse) ok(t *testing.T) gqlResponse {
	t.Helper()
	if r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("status %d, errors: %s", r.Status, r.Raw)
	}
	return r
}

// at walks the data along keys (strings for objects, ints for lists).
func (r gqlResponse) at(t *testing.T, keys ...any) any {
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

// ids returns the node ids of a connection at keys.
func (r gqlResponse) ids(t *testing.T, keys ...any) []string {
	t.Helper()
	edges, _ := r.at(t, append(keys, "edges")...).([]any)
	out := []string{}
	for _, e := range edges {
		n := e.(map[string]any)["node"].(map[string]any)
		out = append(out, n["id"].(string))
	}
	return out
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

// postSSE sends an operation to srv over Server-Sent Events (POST, Accept:
// text/event-stream), with token unless it is empty; the caller closes the
// response's body.
func postSSE(ctx context.Context, t *testing.T, srv *httptest.Server, token, query string, vars map[string]any) *http.Response {
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
