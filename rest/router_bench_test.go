package rest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// BenchmarkRouter sends the benchmark's REST and GraphQL requests through the
// whole router (middleware, service, ent, SQLite) in process; with -cpuprofile and
// -memprofile it shows where a request's time and allocations go. The
// requests bypass the tests' OpenAPI check (testutil.Env.Do), which would
// dominate the figures.
func BenchmarkRouter(b *testing.B) {
	env := testutil.New(b, noRateLimit)
	var ids []string
	for i := range 1000 { // as many as each user of make bench has
		ids = append(ids, env.CreateItem(env.Alice, fmt.Sprintf("item %d", i)))
	}
	cases := []struct {
		name   string
		req    func(n int) testutil.Request
		status int
	}{
		{"list", func(int) testutil.Request {
			return testutil.Request{Method: "GET", Path: "/v1/items?limit=20"}
		}, http.StatusOK},
		{"graphql", func(int) testutil.Request {
			// The GraphQL row of make bench: the same page as list.
			return testutil.Request{Method: "POST", Path: "/graphql",
				Body: `{"query":"{ items(first: 20) { totalCount edges { node { id name description status userID createdAt updatedAt } } } }"}`}
		}, http.StatusOK},
		{"get", func(n int) testutil.Request {
			return testutil.Request{Method: "GET", Path: "/v1/items/" + ids[n%len(ids)]}
		}, http.StatusOK},
		{"create", func(n int) testutil.Request {
			return testutil.Request{Method: "POST", Path: "/v1/items", Body: `{"name":"bench","description":"Created by the benchmark."}`}
		}, http.StatusCreated},
		{"update", func(n int) testutil.Request {
			return testutil.Request{Method: "PUT", Path: "/v1/items/" + ids[n%len(ids)], Body: fmt.Sprintf(`{"name":"renamed %d"}`, n)}
		}, http.StatusOK},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			n := 0
			for b.Loop() {
				// Straight to the handler: env.Do would also check each
				// exchange against the OpenAPI document, which costs
				// several times what the request does.
				r := tc.req(n)
				var body io.Reader
				if r.Body != nil {
					body = strings.NewReader(r.Body.(string))
				}
				req := httptest.NewRequest(r.Method, r.Path, body)
				req.RemoteAddr = "192.0.2.1:1234"
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
				rec := httptest.NewRecorder()
				env.App.Handler.ServeHTTP(rec, req)
				if rec.Code != tc.status {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				n++
			}
			// CPU time of the process per request: unlike ns/op it barely
			// moves when other processes compete for the CPU.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
