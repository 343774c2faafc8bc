package main

import (
	"encoding/json"
	"fmt"
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
		{"too big", measurement{RPS: 900, P99: ok.P99, PeakRSS: 41 << 20}, "MISS: RSS > 40.0 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (rowResult{Row: list, Server: c.srv, Reference: ref}).verdict(); got != c.want {
				t.Errorf("verdict = %q, want %q", got, c.want)
			}
		})
	}
}

// TestContenders: the reference runs the server's rows; every other row
// runs in turns with the server's baseline row that its target names.
func TestContenders(t *testing.T) {
	srv, ref := &process{name: "server"}, &process{name: "reference"}
	traced := tracedServers{traceSampled: {name: "server-sampled"}, traceUnsampled: {name: "server-unsampled"}}
	want := map[string][2]string{ // row -> process:row of the second contender
		"list":             {"reference", "list"},
		"get":              {"reference", "get"},
		"create":           {"reference", "create"},
		"update":           {"reference", "update"},
		"mixed":            {"reference", "mixed"},
		"graphql":          {"server", "list"},
		"list-100k":        {"server", "list"},
		"page-100k":        {"server", "list-100k"},
		"cursor-100k":      {"server", "list-100k"},
		"graphql-100k":     {"server", "list-100k"},
		"list-traced":      {"server", "list"},
		"list-unsampled":   {"server", "list"},
		"create-traced":    {"server", "create"},
		"create-unsampled": {"server", "create"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			w, ok := want[r.name]
			if !ok {
				t.Fatalf("row %s is not in this table", r.name)
			}
			cs, err := contenders(r, srv, ref, traced)
			if err != nil {
				t.Fatal(err)
			}
			first := srv
			if r.tracing != "" {
				first = traced[r.tracing]
			}
			if len(cs) != 2 || cs[0].p != first || cs[0].r.name != r.name {
				t.Fatalf("first contender %s:%s, want %s:%s", cs[0].p.name, cs[0].r.name, first.name, r.name)
			}
			if got := [2]string{cs[1].p.name, cs[1].r.name}; got != w {
				t.Errorf("second contender %v, want %v", got, w)
			}
		})
	}
	if _, err := contenders(row{name: "x", serverOnly: true, baseline: "nope"}, srv, ref, traced); err == nil {
		t.Error("an unknown baseline was accepted")
	}
}

// TestFootprintLines: the WAL line appears on SQLite only, and each line
// judges its figure against its target.
func TestFootprintLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    footprint
		want int
	}{
		{"sqlite", footprint{ServerBinary: 40e6, RefBinary: 10e6, ServerIdle: 20 << 20, RefIdle: 10 << 20, WALMax: 5 << 20}, 3},
		{"postgres", footprint{ServerBinary: 40e6, RefBinary: 10e6, ServerIdle: 20 << 20, RefIdle: 10 << 20, WALMax: -1}, 2},
	} {
		if got := tc.f.lines(); len(got) != tc.want {
			t.Errorf("%s: %d lines, want %d: %q", tc.name, len(got), tc.want, got)
		}
		over := tc.f
		over.ServerBinary, over.ServerIdle = maxBinary+1, maxIdle+1
		if over.WALMax >= 0 {
			over.WALMax = maxWAL
		}
		for i, l := range over.lines() {
			if !strings.Contains(l, ": MISS)") {
				t.Errorf("%s: line %d past its target does not say MISS: %q", tc.name, i, l)
			}
		}
		for i, l := range tc.f.lines() {
			if !strings.Contains(l, ": ok)") {
				t.Errorf("%s: line %d within its target does not say ok: %q", tc.name, i, l)
			}
		}
	}
}

// TestSendStamp: the sending time a stamped create carries is found again in
// its event as the stream sends it (its item's JSON inside the event's), and
// an event without one has none.
func TestSendStamp(t *testing.T) {
	sent := time.Unix(1_764_000_000, 123_456_789)
	req, err := stampedCreate("http://127.0.0.1:1", &fixture{tokens: []string{"tok"}}, 0, 1, sent)
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]string
	if err := json.NewDecoder(req.Body).Decode(&item); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"id": "evt_1", "event": "item.created", "data": item, "timestamp": time.Now()})
	if got, ok := sendStamp(data); !ok || !got.Equal(sent) {
		t.Fatalf("sendStamp(%s) = %v, %v; want %v", data, got, ok, sent)
	}
	if _, ok := sendStamp([]byte(`{"data":{"description":"Created by the benchmark."}}`)); ok {
		t.Fatal("found a stamp in an event without one")
	}
}
