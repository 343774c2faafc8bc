package service_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestCreatesOfOneOwner measures what make bench's pgwrites row does: item
// creates by 64 concurrent writers through a slow link to PostgreSQL
// (LINK_DELAY each way, default 1ms), all for one owner against spread
// over 32 owners. A hot
// row per owner makes one owner's creates queue on it. It runs only when
// CONTENTION_SECONDS is set (it is a measurement, not a check), and fails
// below CONTENTION_MIN_RATIO (default 0.7) of the spread rate.
func TestCreatesOfOneOwner(t *testing.T) {
	secs := os.Getenv("CONTENTION_SECONDS")
	if secs == "" || !testutil.OnPostgres() {
		t.Skip("set CONTENTION_SECONDS and TEST_DATABASE_URL to measure")
	}
	d, err := time.ParseDuration(secs + "s")
	if err != nil {
		t.Fatal(err)
	}
	delay := time.Millisecond
	if v := os.Getenv("LINK_DELAY"); v != "" {
		if delay, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.DatabaseURL = slowLink(t, c.DatabaseURL, delay)
	}))
	owners := make([]context.Context, 32)
	for i := range owners {
		a := env.NewActor(fmt.Sprintf("owner%02d@example.com", i), fmt.Sprintf("Owner %d", i), false)
		owners[i] = viewer.NewContext(context.Background(), viewer.Viewer{UserID: a.UserID, KeyID: a.KeyID, Role: viewer.RoleUser})
	}
	run := func(spread int) (float64, time.Duration) {
		const writers = 64
		var n atomic.Int64
		lat := make([][]time.Duration, writers)
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := owners[w%spread]
				name := "contention"
				for time.Now().Before(stop) {
					t0 := time.Now()
					if _, err := env.App.Service.CreateItem(ctx, ent.CreateItemInput{Name: name}); err != nil {
						t.Error(err)
						return
					}
					lat[w] = append(lat[w], time.Since(t0))
					n.Add(1)
				}
			}()
		}
		start := time.Now()
		wg.Wait()
		all := slices.Concat(lat...)
		slices.Sort(all)
		return float64(n.Load()) / time.Since(start).Seconds(), all[len(all)*99/100]
	}
	run(32) // warm the pool
	// Alternating turns, so that what else loads the machine meets both.
	var one, spread float64
	for range 3 {
		r, p99 := run(32)
		t.Logf("32 owners: %.0f creates/s, p99 %s", r, p99.Round(time.Millisecond))
		spread += r
		r, p99 = run(1)
		t.Logf("one owner: %.0f creates/s, p99 %s", r, p99.Round(time.Millisecond))
		one += r
	}
	ratio := one / spread
	t.Logf("one owner / 32 owners: %.3f", ratio)
	minRatio := 0.7
	if v := os.Getenv("CONTENTION_MIN_RATIO"); v != "" {
		if minRatio, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	if ratio < minRatio {
		t.Errorf("one owner's creates %.3f× those spread over 32 owners, want ≥ %.2f×", ratio, minRatio)
	}
	assertCounts(t, env)
}

// slowLink starts a TCP proxy in front of the PostgreSQL server of dbURL that
// delays every chunk by delay in each direction, and returns dbURL through
// it.
func slowLink(t *testing.T, dbURL string, delay time.Duration) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go delayed(c, s, delay)
			go delayed(s, c, delay)
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// delayed copies src to dst, each chunk delay after it arrived.
func delayed(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	ch := make(chan chunk, 1024)
	go func() {
		defer close(ch)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				ch <- chunk{time.Now().Add(delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	_, _ = io.Copy(io.Discard, src)
}
