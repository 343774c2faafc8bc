package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// fuzzedHeaders are the request headers the server reads; FuzzHeaders sets
// one of them (picked by its index, modulo the list) to arbitrary bytes.
var fuzzedHeaders = []string{
	"Idempotency-Key", "If-Match", "If-None-Match", "Last-Event-ID", "X-Request-ID", "traceparent",
	"tracestate", "Authorization", "Accept", "Content-Type", "X-Forwarded-For", "Origin", "Upgrade",
}

// FuzzHeaders sends every header the server reads, with arbitrary bytes,
// on the routes that read it (REST's creates, an update, a read, GraphQL's
// createItem over JSON and an event stream): whatever the bytes, the answer
// is the client's to fix (4xx) or a success, never a 5xx. .ci/run runs it
// for a while on SQLite and on PostgreSQL, which refuses to store text
// that is not UTF-8; the seed corpus (below, and testdata/fuzz) runs with
// the normal tests.
func FuzzHeaders(f *testing.F) {
	// Bytes that are not UTF-8 on every header; the rest on one header
	// each, in turn (the fuzzer moves them to the others).
	for _, v := range []string{"\xff\xfeKEY", "caf\xe9-key", "\xc0\xaf", "\x80abc"} {
		for i := range fuzzedHeaders {
			f.Add(uint8(i), v)
		}
	}
	for i, v := range []string{
		"", " ", "k", strings.Repeat("k", 256),
		"\x00", "a\nb", "\"etag\"", "W/\"x\"", "*", "\"\xff\"", "evt_01m80r92d8jcq7kyybma0724rk", "evt_\xff",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-\xff-\xff-01", "Bearer \xff",
		"text/event-stream", "application/json; charset=\xff", "203.0.113.9, \xff", "http://\xff", "websocket",
	} {
		f.Add(uint8(i), v)
	}
	env := testutil.New(f, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 1<<30, 1<<30
	}))
	id := env.CreateItem(env.Alice, "fuzzed headers")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		name := fuzzedHeaders[int(which)%len(fuzzedHeaders)]
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/items", `{"name":"fuzz"}`},
			{"POST", "/v1/webhooks", `{"url":"https://example.com/hook"}`},
			{"PUT", "/v1/items/" + id, `{"description":"fuzz"}`},
			{"GET", "/v1/items/" + id, ""},
			{"GET", "/v1/events?limit=1", ""},
			{"POST", "/graphql", `{"query":"mutation { createItem(input: {name: \"fuzz\"}) { id } }"}`},
		} {
			req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
			req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
			if r.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header[http.CanonicalHeaderKey(name)] = []string{value}
			if res := env.Serve(req); res.Status >= 500 {
				t.Fatalf("%s %s with %s: %q: %d %s", r.method, r.path, name, value, res.Status, res.Body)
			}
		}
	})
}
