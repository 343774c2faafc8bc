package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestItemShares: workers of one user never update the same item at once,
// and every worker stays within its own user's items.
func TestItemShares(t *testing.T) {
	for _, tc := range []struct{ users, perUser, conns int }{{10, 1000, 32}, {10, 1000, 1}, {3, 5, 32}, {10, 1, 32}} {
		t.Run(fmt.Sprintf("%d users, %d items each, %d conns", tc.users, tc.perUser, tc.conns), func(t *testing.T) {
			fx := &fixture{tokens: make([]string, tc.users), items: make([][]string, tc.users)}
			owner := map[string]int{}
			for u := range tc.users {
				for i := range tc.perUser {
					id := fmt.Sprintf("item_%d_%d", u, i)
					fx.items[u] = append(fx.items[u], id)
					owner[id] = u
				}
			}
			used := map[string]int{} // item -> worker
			for w := range tc.conns {
				for n := range 3 * tc.perUser {
					id := fx.item(w, n, tc.conns)
					if owner[id] != w%tc.users {
						t.Fatalf("worker %d got item %s of user %d", w, id, owner[id])
					}
					if other, ok := used[id]; ok && other != w && tc.perUser*tc.users >= tc.conns {
						t.Fatalf("workers %d and %d share %s", other, w, id)
					}
					used[id] = w
				}
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	list := rows[0]
	ok := measurement{RPS: 900, P99: 10 * time.Millisecond, PeakRSS: 40 << 20}
	ref := measurement{RPS: 1000}
	cases := []struct {
		name string
		srv  measurement
		want string
	}{
		{"meets every target", ok, "ok"},
		{"too slow", measurement{RPS: 800, P99: ok.P99, PeakRSS: ok.PeakRSS}, "MISS: req/s < 0.85×"},
		{"slow tail", measurement{RPS: 900, P99: 20 * time.Millisecond, PeakRSS: ok.PeakRSS}, "MISS: p99 > 15.00 ms"},
		{"errors", measurement{RPS: 900, P99: ok.P99, PeakRSS: ok.PeakRSS, Errors: 1}, "MISS: errors"},
		{"too big", measurement{RPS: 900, P99: ok.P99, PeakRSS: 65 << 20}, "MISS: RSS > 64 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (rowResult{Row: list, Server: c.srv, Reference: ref}).verdict(); got != c.want {
				t.Errorf("verdict = %q, want %q", got, c.want)
			}
		})
	}
}

// TestWriteMarkdown: a new run goes on top and earlier runs are kept.
func TestWriteMarkdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	m := machine{CPUs: 2, Model: "Test CPU", Commit: "abc1234", Go: "go1.26"}
	for i, when := range []time.Time{time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)} {
		r := runResult{Config: "standard", Dialect: "sqlite", Users: 10, Items: 10000, Conns: 32, Duration: time.Second, Started: when, Note: fmt.Sprintf("run %d", i),
			Rows: []rowResult{
				{Row: rows[0], Server: measurement{RPS: 900}, Reference: measurement{RPS: 1000}},
				{Row: rows[2], Skipped: "POST /graphql answers 404"},
			}}
		if err := writeMarkdown(path, r, m); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.Count(s, "# Benchmarks") != 1 || strings.Count(s, runMarker) != 2 {
		t.Fatalf("want one head and two runs:\n%s", s)
	}
	if strings.Index(s, "2026-01-02") > strings.Index(s, "2026-01-01") {
		t.Errorf("newest run is not first:\n%s", s)
	}
	for _, want := range []string{"| GET /v1/items?limit=20 | 900 | 0.900 |", "skipped: POST /graphql answers 404", "2 CPUs, Test CPU", "commit abc1234", "run 1"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
}

// TestBaselines: rows the reference does not run are compared with the
// server's row their target names, and skipped when that row did not run.
func TestBaselines(t *testing.T) {
	byName := map[string]row{}
	for _, r := range rows {
		byName[r.name] = r
	}
	m := func(rps float64) measurement { return measurement{RPS: rps} }
	cases := []struct {
		name    string
		results []rowResult
		want    map[string]string // row -> verdict or "skipped"
		ratio   map[string]float64
	}{
		{
			name: "all rows",
			results: []rowResult{
				{Row: byName["list"], Server: m(1000), Reference: m(1000)},
				{Row: byName["graphql"], Server: m(850)},
				{Row: byName["list-100k"], Server: m(800)},
				{Row: byName["page-100k"], Server: m(100)},
				{Row: byName["cursor-100k"], Server: m(790)},
				{Row: byName["graphql-100k"], Server: m(600)},
			},
			want:  map[string]string{"graphql": "ok", "list-100k": "MISS: req/s < 0.90×", "page-100k": "ok", "cursor-100k": "ok", "graphql-100k": "MISS: req/s < 0.80×"},
			ratio: map[string]float64{"graphql": 0.85, "list-100k": 0.8, "page-100k": 0.125, "cursor-100k": 790.0 / 800, "graphql-100k": 0.75},
		},
		{
			name:    "baseline missing",
			results: []rowResult{{Row: byName["cursor-100k"], Server: m(790)}},
			want:    map[string]string{"cursor-100k": "skipped"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runResult{Rows: c.results}
			r.finish()
			for _, row := range r.Rows {
				want, ok := c.want[row.Row.name]
				if !ok {
					continue
				}
				if got := row.verdict(); got != want {
					t.Errorf("%s: verdict %q, want %q (%s)", row.Row.name, got, want, row.Skipped)
				}
				if q, ok := c.ratio[row.Row.name]; ok && row.Server.RPS/row.Reference.RPS != q {
					t.Errorf("%s: ratio %v, want %v", row.Row.name, row.Server.RPS/row.Reference.RPS, q)
				}
			}
		})
	}
}
