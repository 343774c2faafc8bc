package rest_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestRateLimitReplicas runs two servers on one database, as two replicas
// would: with Redis they spend one budget per key, in memory each counts
// alone (which is why production replicas need REDIS_URL).
func TestRateLimitReplicas(t *testing.T) {
	cases := []struct {
		store  string
		shared bool
	}{
		{"memory", false},
		{"redis", true},
	}
	stores := rateStores(t)
	for _, tc := range cases {
		url, ok := stores[tc.store]
		if !ok {
			continue
		}
		t.Run(tc.store, func(t *testing.T) {
			prefix := "itemsvc:test:" + ulid.Make().String()
			a := limited(t, url, 3, 10, 20, testutil.WithAppOptions(func(o *app.Options) { o.RateLimitPrefix = prefix }))
			other, err := app.New(context.Background(), a.App.Config, slog.New(slog.DiscardHandler), app.Options{RateLimitPrefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			b := &testutil.Env{T: t, App: other}

			type step struct {
				env       *testutil.Env
				replica   string
				status    int
				remaining int
			}
			steps := []step{{a, "A", 200, 2}, {b, "B", 200, 1}, {a, "A", 200, 0}, {b, "B", 429, 0}}
			if !tc.shared {
				steps = []step{{a, "A", 200, 2}, {b, "B", 200, 2}, {a, "A", 200, 1}, {b, "B", 200, 1}}
			}
			for i, s := range steps {
				r := s.env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: a.Alice.Token})
				if r.Status != s.status {
					t.Fatalf("request %d on %s: status %d, want %d\n%s", i+1, s.replica, r.Status, s.status, r.Body)
				}
				window(3, s.remaining, time.Minute)(t, r)
			}
		})
	}
}

// TestRateLimitRedisDown keeps serving when Redis is unreachable, at start
// or mid-run: requests succeed without rate-limit headers, the failures are
// counted in a metric, and counting resumes when Redis is back.
func TestRateLimitRedisDown(t *testing.T) {
	t.Run("dead address from the start", func(t *testing.T) {
		env := limited(t, "redis://127.0.0.1:1/0", 2, 10, 1)
		start := time.Now()
		testutil.Run(t, env, []testutil.Scenario{
			{Name: "request 1", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token, Status: http.StatusOK, Check: unlimited},
			{Name: "request 2", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token, Status: http.StatusOK, Check: unlimited},
			{Name: "request 3, over the limit, still served", Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token, Status: http.StatusOK, Check: unlimited},
			loginAs("failed login", badKey, "", http.StatusUnauthorized, "INVALID_API_KEY"),
			loginAs("login after the failure limit, still served", env.Alice.Key, "", http.StatusOK, ""),
		})
		t.Logf("5 requests with a dead Redis took %v", time.Since(start))
		if got := env.Scrape().Value("itemsvc_ratelimit_fail_open_total", nil); got < 5 {
			t.Errorf("fail_open = %v, want at least 5", got)
		}
		if got := env.Scrape().Value("itemsvc_ratelimit_store_errors_total", nil); got < 1 {
			t.Errorf("store_errors = %v, want at least 1", got)
		}
	})

	t.Run("stops mid-run and comes back", func(t *testing.T) {
		target := redisAddr(t, testutil.RedisURL(t))
		proxy := startTCPProxy(t, "127.0.0.1:0", target)
		u, _ := url.Parse(testutil.RedisURL(t))
		u.Host = proxy.addr
		env := limited(t, u.String(), 3, 10, 20)
		me := func() *testutil.Response {
			return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token})
		}

		for i, want := range []int{2, 1} {
			r := me()
			if r.Status != http.StatusOK {
				t.Fatalf("request %d: %d %s", i+1, r.Status, r.Body)
			}
			window(3, want, time.Minute)(t, r)
		}

		proxy.Close() // Redis is gone, and so are the open connections to it
		for i := range 5 {
			r := me()
			if r.Status != http.StatusOK {
				t.Fatalf("request %d with Redis down: %d %s", i+1, r.Status, r.Body)
			}
			unlimited(t, r)
		}
		if got := env.Scrape().Value("itemsvc_ratelimit_fail_open_total", nil); got < 5 {
			t.Errorf("fail_open = %v, want at least 5", got)
		}

		// Redis is back at the same address: after the cooldown requests
		// are counted again, against the count Redis kept (2 spent).
		startTCPProxy(t, proxy.addr, target)
		var r *testutil.Response
		if !testutil.Eventually(t, 5*time.Second, func() bool { r = me(); return r.Header.Get("X-RateLimit-Remaining") != "" }) {
			t.Fatal("counting never resumed after Redis came back")
		}
		if r.Status != http.StatusOK {
			t.Fatalf("first counted request: %d %s", r.Status, r.Body)
		}
		window(3, 0, time.Minute)(t, r)
		if r := me(); r.Status != http.StatusTooManyRequests {
			t.Fatalf("after the budget: %d %s", r.Status, r.Body)
		}
	})
}

func redisAddr(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// tcpProxy forwards connections to a Redis; closing it is, for the server,
// Redis going away: the listener and every open connection close.
type tcpProxy struct {
	addr string
	ln   net.Listener

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func startTCPProxy(t *testing.T, addr, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(p.Close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, up) {
				return
			}
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, conns...)
	return true
}

// Close stops accepting and cuts every connection.
func (p *tcpProxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
