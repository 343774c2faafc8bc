package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// appendedRuns is a BENCHMARKS.md as it was written before the history: a
// run after another, newest first, each under "## Run". Its runs are taken
// from such a file (tables cut short), old columns (before the CPU column) and
// skipped rows included.
const appendedRuns = `# Benchmarks

Written by ` + "`make bench ARGS=-write`" + ` (bench/cmd/bench), never by hand; newest run first.

## Run 2026-11-25 20:17 UTC, commit 143fd17

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- note: run 3 of 3
- database: sqlite, 10 users, 10000 items, and one more user with 100000 items (rows at scale); 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | CPU µs/req | × ref | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| GET /v1/items?limit=20 | 3805 | 0.971 | ≥ 0.85 | 262 | 1.03 | 8.20 | 1.02 | 13.37 | 1.25 | 0 | 29.9 | 1.56 | ok |
| POST /graphql items(first: 20) + totalCount | 2967 | 0.820 | ≥ 0.80 × list | 336 | 1.22 | 10.53 | 1.21 | 15.91 | 1.16 | 0 | 31.9 | 1.00 | ok |
| reference: GET /v1/items?limit=20 | 3920 |  |  | 254 |  | 8.06 |  | 10.67 |  | 0 | 19.2 |  |  |

- binary (-trimpath -ldflags='-s -w'): server 27.4 MB, reference 14.9 MB (target ≤ 40 MB: ok)
- idle RSS after start: server 20.4 MiB, reference 11.2 MiB (target ≤ 20.0 MiB: MISS)

## Run 2026-11-25 20:15 UTC, commit 143fd17

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- note: run 2 of 3
- database: sqlite, 10 users, 10000 items, and one more user with 100000 items (rows at scale); 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | CPU µs/req | × ref | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| GET /v1/items?limit=20 | 4006 | 1.034 | ≥ 0.85 | 248 | 0.97 | 7.81 | 0.98 | 12.21 | 0.99 | 0 | 29.5 | 1.53 | ok |
| POST /graphql items(first: 20) + totalCount | 3117 | 0.820 | ≥ 0.80 × list | 320 | 1.22 | 10.11 | 1.22 | 14.70 | 1.17 | 0 | 31.9 | 1.00 | ok |
| reference: GET /v1/items?limit=20 | 3875 |  |  | 257 |  | 7.99 |  | 12.29 |  | 0 | 19.3 |  |  |

- binary (-trimpath -ldflags='-s -w'): server 27.4 MB, reference 14.9 MB (target ≤ 40 MB: ok)
- idle RSS after start: server 20.4 MiB, reference 11.2 MiB (target ≤ 20.0 MiB: MISS)

## Run 2026-11-25 18:23 UTC, commit c78c4a9

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- database: postgres, 10 users, 10000 items; 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | CPU µs/req | × ref | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |

- pgwrites: POST /v1/items, 32 owner(s), 64 connections: through the 2ms link 1161/s (p99 89.28 ms), direct 1188/s (p99 91.34 ms) = 0.977, errors 0/0
- pgwrites: 32 owner(s): through the 2ms link at 64 connections 0.977× direct (target ≥ 0.7×), 3.473× its 8 connections (target ≥ 1): ok
- pgwrites: 1 owner(s): through the 2ms link at 64 connections 0.897× direct (target ≥ 0.7×), 3.467× its 8 connections (target ≥ 1): ok

- binary (-trimpath -ldflags='-s -w'): server 27.2 MB, reference 14.9 MB (target ≤ 40 MB: ok)

## Run 2026-11-24 09:00 UTC, commit 1a2b3c4

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- database: postgres, 10 users, 10000 items; 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | CPU µs/req | × ref | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |

- pgwrites: 32 owner(s): through the 2ms link at 64 connections 0.977× direct (target ≥ 0.7×), 3.473× its 8 connections (target ≥ 1): ok
- pgwrites: 1 owner(s): through the 2ms link at 64 connections 0.386× direct (target ≥ 0.7×), 1.012× its 8 connections (target ≥ 1): MISSED

## Run 2026-11-25 06:26 UTC, commit 4934bd3

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- database: sqlite, 10 users, 10000 items; 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | CPU µs/req | × ref | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| GET /v1/items?limit=20 | 6850 | 0.974 | ≥ 0.85 | 146 | 1.03 | 4.74 | 1.05 | 5.96 | 1.06 | 0 | 29.6 | 1.51 | ok |
| POST /graphql items(first: 20) + totalCount | 5879 | 0.885 | ≥ 0.80 × list | 169 | 1.13 | 5.52 | 1.14 | 9.10 | 1.44 | 0 | 31.6 | 1.00 | ok |
| POST /v1/items | 3489 | 1.024 | ≥ 0.70 | 246 | 1.03 | 4.81 | 0.83 | 150.59 | 1.17 | 0 | 35.3 | 1.07 | ok |
| reference: GET /v1/items?limit=20 | 7030 |  |  | 142 |  | 4.51 |  | 5.62 |  | 0 | 19.6 |  |  |
| reference: POST /v1/items | 3408 |  |  | 240 |  | 5.78 |  | 128.71 |  | 0 | 33.0 |  |  |

- realtime: 1000 SSE subscribers (each change reaches 100: its owner's), 2000 changes at 200/s: 200000 of 200000 events delivered; write→subscriber p50 6.86 ms, p99 12.63 ms (target < 50.00 ms), max 23.49 ms; server RSS 34.5 MiB idle → 94.5 MiB with the subscribers
- realtime: POST /v1/items with the 1000 subscribers connected: 2983/s vs 3262/s without = 0.914 (target ≥ 0.8×): MISSED

- pgwrites: skipped: needs PostgreSQL (BENCH_DATABASE_URL)

- binary (-trimpath -ldflags='-s -w'): server 27.3 MB, reference 14.9 MB (target ≤ 40 MB: ok)
- SQLite write-ahead log, largest during the rows (sampled every 20ms): 88.6 MiB (target < 64.0 MiB: MISS); by row: list 0.0, graphql 0.0, create 88.6

## Run 2026-11-22 05:05 UTC, commit 8504283 (with uncommitted changes)

- machine: 2 CPUs, AMD EPYC; go1.26.8
- configuration: standard: server and reference on CPU 0, load generator on CPU 1 (taskset)
- note: the 2 CPUs were shared with 4 engineers compiling and testing
- database: sqlite, 10 users, 10000 items; 32 connections, closed loop; 10s per row and server after 2s warmup

| request | req/s | × ref | target | p50 ms | × ref | p99 ms | × ref | errors | peak RSS MiB | × ref | verdict |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| GET /v1/items?limit=20 | 3397 | 0.809 | ≥ 0.85 | 8.95 | 1.23 | 15.21 | 1.22 | 0 | 46.5 | 2.09 | MISS: req/s < 0.85×, p99 > 15.00 ms |
| POST /graphql items(first: 20) + totalCount | – | – | – | – | – | – | – | – | – | – | skipped: POST /graphql answers 404: the server has no GraphQL endpoint yet |
| POST /v1/items | 1445 | 0.767 | ≥ 0.70 | 16.86 | 1.35 | 128.30 | 1.23 | 0 | 53.9 | 1.78 | ok |
| reference: GET /v1/items?limit=20 | 4197 |  |  | 7.29 |  | 12.45 |  | 0 | 22.3 |  |  |

- realtime: POST /v1/items with the 1000 subscribers connected: 3000/s vs 3100/s without = 0.968 (target ≥ 0.8×): ok

- pgwrites: skipped: needs PostgreSQL (BENCH_DATABASE_URL)
`

// TestRecordRun: a run recorded into BENCHMARKS.md becomes the current
// section of its set of rows (database and rows), newest set first; each
// older run on the same database whose rows it all measured becomes one
// history line (when, commit, database, each row's ratio, MISS where a
// target was missed), newest first; a file of appended runs converts.
// Recording nothing into the result changes nothing.
func TestRecordRun(t *testing.T) {
	m := machine{CPUs: 2, Model: "Test CPU", Commit: "abc1234", Go: "go1.26"}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 10, 0, 0, 0, time.UTC) }
	list := rowResult{Row: rowNamed(t, "list"), Server: measurement{RPS: 900, CPUPerReq: 330}, Reference: measurement{RPS: 1000, CPUPerReq: 300}}
	slow := rowResult{Row: rowNamed(t, "list"), Server: measurement{RPS: 800}, Reference: measurement{RPS: 1000}}
	graphql := rowResult{Row: rowNamed(t, "graphql"), Server: measurement{RPS: 800}, Reference: measurement{RPS: 1000}}
	realtime := &realtimeResult{Subscribers: 1000, PerUser: 100, Changes: 2000, Rate: 200, Delivered: 200000, Expected: 200000,
		P99: 10 * time.Millisecond, Create: 950, CreateWithout: 1000}
	pgwrites := &pgWritesResult{Latency: time.Millisecond, Cases: []pgWritesCase{
		{Owners: 32, Conns: 8, Linked: measurement{RPS: 300}, Direct: measurement{RPS: 900}},
		{Owners: 32, Conns: 64, Linked: measurement{RPS: 1100}, Direct: measurement{RPS: 1200}},
		{Owners: 1, Conns: 8, Linked: measurement{RPS: 300}, Direct: measurement{RPS: 900}},
		{Owners: 1, Conns: 64, Linked: measurement{RPS: 500}, Direct: measurement{RPS: 1000}},
	}}
	run := func(when time.Time, dialect string, rr ...rowResult) runResult {
		return runResult{Config: "standard", Dialect: dialect, Users: 10, Items: 10000, Conns: 32, Duration: time.Second, Started: when,
			Rows: rr, Foot: footprint{ServerBinary: 30e6, RefBinary: 15e6, ServerIdle: 19 << 20, RefIdle: 11 << 20, WALMax: -1}}
	}
	record := func(old string, runs ...runResult) string {
		for _, r := range runs {
			old = string(recordRun([]byte(old), runMarkdown(r, m)))
		}
		return old
	}
	withExtras := run(day(1), "postgres", list)
	withExtras.Realtime, withExtras.PGWrites = realtime, pgwrites
	withExtras2 := withExtras
	withExtras2.Started = day(2)

	cases := []struct {
		name    string
		old     string
		run     runResult // recorded into old; zero: none
		sets    []string  // headings of the current sections, in order
		history []string
		has     []string // lines the result must hold
	}{
		{
			name: "the first run",
			run:  run(day(1), "sqlite", list, graphql),
			sets: []string{"sqlite: list, graphql"},
			has: []string{"### Run 2026-01-01 10:00 UTC, commit abc1234", "- machine: 2 CPUs, Test CPU; go1.26",
				"| GET /v1/items?limit=20 | 900 | 0.900 | ≥ 0.85 | 330 | 1.10 |", "| reference: GET /v1/items?limit=20 | 1000 |  |  | 300 |"},
		},
		{
			name:    "a run of the same set replaces it; the replaced one becomes a history line",
			old:     record("", run(day(1), "sqlite", list, graphql)),
			run:     run(day(2), "sqlite", slow, graphql),
			sets:    []string{"sqlite: list, graphql"},
			history: []string{"- 2026-01-01 10:00 UTC, commit abc1234, sqlite: list 0.900 × ref, graphql 0.800 × list"},
			has:     []string{"### Run 2026-01-02 10:00 UTC, commit abc1234", "| GET /v1/items?limit=20 | 800 | 0.800 | ≥ 0.85 |"},
		},
		{
			name: "a run of other rows is a set of its own, newest first",
			old:  record("", run(day(1), "sqlite", list, graphql)),
			run:  run(day(2), "sqlite", list),
			sets: []string{"sqlite: list", "sqlite: list, graphql"},
		},
		{
			name: "a run of more rows replaces every run whose rows it measured again",
			old:  record("", run(day(1), "sqlite", list), run(day(2), "sqlite", graphql), run(day(3), "postgres", list)),
			run:  run(day(4), "sqlite", list, graphql),
			sets: []string{"sqlite: list, graphql", "postgres: list"},
			history: []string{
				"- 2026-01-02 10:00 UTC, commit abc1234, sqlite: graphql 0.800 × list",
				"- 2026-01-01 10:00 UTC, commit abc1234, sqlite: list 0.900 × ref",
			},
		},
		{
			name: "a run on another database is a set of its own",
			old:  record("", run(day(2), "sqlite", list)),
			run:  run(day(1), "postgres", list),
			sets: []string{"sqlite: list", "postgres: list"},
		},
		{
			name: "the realtime and pgwrites rows belong to the set and to its history line",
			old:  record("", withExtras),
			run:  withExtras2,
			sets: []string{"postgres: list, realtime, pgwrites"},
			history: []string{"- 2026-01-01 10:00 UTC, commit abc1234, postgres: list 0.900 × ref, " +
				"realtime 0.950 × without streams, pgwrites 32 owner(s) 0.917 × direct, pgwrites 1 owner(s) 0.500 × direct (MISS)"},
		},
		{
			name: "the history keeps its lines, newest first",
			old:  record("", run(day(1), "sqlite", list), run(day(2), "postgres", list), run(day(3), "sqlite", slow), run(day(4), "postgres", slow)),
			run:  run(day(5), "sqlite", list),
			sets: []string{"sqlite: list", "postgres: list"},
			history: []string{
				"- 2026-01-03 10:00 UTC, commit abc1234, sqlite: list 0.800 × ref (MISS)",
				"- 2026-01-02 10:00 UTC, commit abc1234, postgres: list 0.900 × ref",
				"- 2026-01-01 10:00 UTC, commit abc1234, sqlite: list 0.900 × ref",
			},
		},
		{
			name: "a file of appended runs converts",
			old:  appendedRuns,
			sets: []string{"sqlite: list, graphql", "postgres: pgwrites", "sqlite: list, graphql, create, realtime, pgwrites"},
			history: []string{
				"- 2026-11-25 20:15 UTC, commit 143fd17, sqlite: list 1.034 × ref, graphql 0.820 × list, idle RSS after start (MISS)",
				"- 2026-11-24 09:00 UTC, commit 1a2b3c4, postgres: pgwrites 32 owner(s) 0.977 × direct, pgwrites 1 owner(s) 0.386 × direct (MISS)",
				"- 2026-11-22 05:05 UTC, commit 8504283 (with uncommitted changes), sqlite: list 0.809 × ref (MISS), graphql skipped, create 0.767 × ref, " +
					"realtime 0.968 × without streams, pgwrites skipped",
			},
			has: []string{"### Run 2026-11-25 20:17 UTC, commit 143fd17", "- note: run 3 of 3", "### Run 2026-11-25 06:26 UTC, commit 4934bd3",
				"- realtime: POST /v1/items with the 1000 subscribers connected: 2983/s vs 3262/s without = 0.914 (target ≥ 0.8×): MISSED"},
		},
		{
			name: "a run recorded into a converted file",
			old:  record(appendedRuns),
			run:  run(time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC), "postgres", list),
			sets: []string{"postgres: list", "sqlite: list, graphql", "postgres: pgwrites", "sqlite: list, graphql, create, realtime, pgwrites"},
			history: []string{
				"- 2026-11-25 20:15 UTC, commit 143fd17, sqlite: list 1.034 × ref, graphql 0.820 × list, idle RSS after start (MISS)",
				"- 2026-11-24 09:00 UTC, commit 1a2b3c4, postgres: pgwrites 32 owner(s) 0.977 × direct, pgwrites 1 owner(s) 0.386 × direct (MISS)",
				"- 2026-11-22 05:05 UTC, commit 8504283 (with uncommitted changes), sqlite: list 0.809 × ref (MISS), graphql skipped, create 0.767 × ref, " +
					"realtime 0.968 × without streams, pgwrites skipped",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.old
			if !c.run.Started.IsZero() {
				got = record(got, c.run)
			} else {
				got = string(recordRun([]byte(got), ""))
			}
			if !strings.HasPrefix(got, markdownHead) {
				t.Errorf("does not open with the head:\n%s", got)
			}
			var sets, history []string
			inHistory := false
			for _, l := range strings.Split(got, "\n") {
				switch {
				case l == historyHeading:
					inHistory = true
				case strings.HasPrefix(l, "## "):
					sets = append(sets, strings.TrimPrefix(l, "## "))
				case inHistory && strings.HasPrefix(l, "- "):
					history = append(history, l)
				}
			}
			if !slices.Equal(sets, c.sets) {
				t.Errorf("sets %q, want %q:\n%s", sets, c.sets, got)
			}
			if !slices.Equal(history, c.history) {
				t.Errorf("history\n%s\nwant\n%s", strings.Join(history, "\n"), strings.Join(c.history, "\n"))
			}
			if n := strings.Count(got, historyHeading); n != min(len(c.history), 1) {
				t.Errorf("%d history headings for %d lines of history", n, len(c.history))
			}
			for _, want := range c.has {
				if !strings.Contains(got, want) {
					t.Errorf("lacks %q:\n%s", want, got)
				}
			}
			if again := string(recordRun([]byte(got), "")); again != got {
				t.Errorf("recording nothing changed the file:\n%s\nto\n%s", got, again)
			}
		})
	}
}

// rowNamed is the row of that name (rows gains rows: none is at a fixed
// index).
func rowNamed(t *testing.T, name string) row {
	t.Helper()
	for _, r := range rows {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return row{}
}
