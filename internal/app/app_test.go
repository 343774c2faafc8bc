package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // to count the server's PostgreSQL connections
	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestStartStop: the wiring starts and stops cleanly on each database, with
// and without Redis: a server built, started and serving real requests
// (login, a list, a create that wakes the workers, an event stream) leaves,
// once shut down and closed, no goroutine of its own, its listener closed
// and no connection to PostgreSQL or Redis open.
func TestStartStop(t *testing.T) {
	cases := []struct {
		name            string
		postgres, redis bool
		// start: the workers run and the server serves; else it is built
		// and closed only.
		start bool
	}{
		{"sqlite, built only", false, false, false},
		{"sqlite", false, false, true},
		{"sqlite with redis", false, true, true},
		{"postgres, built only", true, false, false},
		{"postgres", true, false, true},
		{"postgres with redis", true, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// One name for the server's connections, to find them again
			// among the other tests'.
			name := "itemsvc-app-test-" + strings.ToLower(ulid.Make().String())
			cfg := testutil.Config(t)
			if c.postgres {
				if !testutil.OnPostgres() {
					t.Skip("needs TEST_DATABASE_URL")
				}
				cfg.DatabaseURL = withQuery(t, cfg.DatabaseURL, "application_name", name)
			} else {
				cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "app.db")
			}
			if c.redis {
				cfg.RedisURL = withQuery(t, testutil.RedisURL(t), "client_name", name)
			}
			before := goroutines()
			addr := lifecycle(t, cfg, name, c.start, c.postgres, c.redis)
			if addr != "" {
				if conn, err := net.Dial("tcp", addr); err == nil {
					conn.Close()
					t.Error("the listener still accepts connections")
				}
			}
			// The app is out of reach now: the in-memory rate-limit
			// store's cleaner stops once the store is collected.
			var left []string
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				runtime.GC()
				left = leftBehind(before, goroutines())
				return len(left) == 0
			}) {
				t.Errorf("%d goroutines left behind:\n\n%s", len(left), strings.Join(left, "\n\n"))
			}
		})
	}
}

// lifecycle builds an app on cfg, serves with it when start is set, closes
// it, and checks that it left no connection under name open; it returns the
// address it served on, if any. The connections are counted while the app is
// still referenced: the runtime closes the sockets of a collected one.
func lifecycle(t *testing.T, cfg config.Config, name string, start, postgres, redis bool) string {
	t.Helper()
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{RateLimitPrefix: name})
	if err != nil {
		t.Fatal(err)
	}
	var addr string
	if start {
		addr = serve(t, a, postgres, redis, name)
	}
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	if postgres && !testutil.Eventually(t, 10*time.Second, func() bool { return postgresConns(t, name) == 0 }) {
		t.Errorf("%d PostgreSQL connections left open", postgresConns(t, name))
	}
	if redis && !testutil.Eventually(t, 10*time.Second, func() bool { return redisConns(t, name) == 0 }) {
		t.Errorf("%d Redis connections left open", redisConns(t, name))
	}
	runtime.KeepAlive(a)
	return addr
}

// serve starts a's workers and serves its handler on a listener of its own,
// as the binary does, makes the requests that bring every part into use,
// and shuts the server down; it returns the address it listened on.
func serve(t *testing.T, a *app.App, postgres, redis bool, name string) string {
	t.Helper()
	a.Start(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: a.Handler}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

	do := func(method, path, token, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	expect := func(res *http.Response, status int) string {
		t.Helper()
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", res.Request.Method, res.Request.URL.Path, res.StatusCode, b, status)
		}
		return string(b)
	}

	expect(do("GET", "/readyz", "", ""), 200)
	key, err := a.Service.CreateKey(context.Background(), "alice@example.com", "Alice", false)
	if err != nil {
		t.Fatal(err)
	}
	login := expect(do("POST", "/v1/auth/login", "", `{"api_key":"`+key.Key+`"}`), 200)
	token := regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(login)[1]
	expect(do("POST", "/v1/auth/login", "", `{"api_key":"sk_live_wrong"}`), 401) // the failed-login budget
	if res := do("GET", "/v1/items", token, ""); res.Header.Get("X-RateLimit-Remaining") == "" {
		t.Error("no rate-limit headers")
	} else {
		expect(res, 200)
	}

	// A stream open while a create commits: the hub and its relay carry it.
	stream := do("GET", "/v1/events/stream", token, "")
	if stream.StatusCode != 200 {
		expect(stream, 200)
	}
	expect(do("POST", "/v1/items", token, `{"name":"x"}`), 201)
	if got := readEvent(t, stream.Body); !strings.Contains(got, "event: item.created") {
		t.Fatalf("stream: %q", got)
	}
	if postgres && postgresConns(t, name) == 0 {
		t.Fatal("no PostgreSQL connection under the server's name: the check after Close would prove nothing")
	}
	if redis && redisConns(t, name) == 0 {
		t.Fatal("no Redis connection under the server's name: the check after Close would prove nothing")
	}

	// The client leaves its stream; the server drains, then the caller
	// closes the app, as the binary stops.
	stream.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("serve: %v", err)
	}
	client.CloseIdleConnections()
	return ln.Addr().String()
}

// readEvent reads a stream up to the end of its first event.
func readEvent(t *testing.T, r io.Reader) string {
	t.Helper()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), "\nevent: ") || !strings.HasSuffix(got.String(), "\n\n") {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("stream ended: %v after %q", err, got.String())
		}
	}
	return got.String()
}

// withQuery returns raw with the query parameter set.
func withQuery(t *testing.T, raw, key, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// goroutines are the stacks of every goroutine, by their "goroutine N" line.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		id, _, _ := strings.Cut(g, " [")
		out[id] = g
	}
	return out
}

// leftBehind are the stacks of goroutines in after but not in before, but
// for the test's own (the testing package's, this check's).
func leftBehind(before, after map[string]string) []string {
	var left []string
	for id, stack := range after {
		if _, ok := before[id]; ok || strings.Contains(stack, "testing.tRunner") || strings.Contains(stack, "runtime.Stack") {
			continue
		}
		left = append(left, stack)
	}
	slices.Sort(left)
	return left
}

// postgresConns counts the PostgreSQL connections named name.
func postgresConns(t *testing.T, name string) int {
	t.Helper()
	db, err := sql.Open("pgx", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// redisConns counts the Redis connections named name.
func redisConns(t *testing.T, name string) int {
	t.Helper()
	opt, err := redis.ParseURL(testutil.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(list, fmt.Sprintf(" name=%s ", name))
}
