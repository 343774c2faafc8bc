package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// row is one measured request kind.
type row struct {
	name, title string
	// serverOnly rows are not run on the reference (GraphQL, which it
	// lacks, and the rows at scale, whose targets are about the server
	// itself); the server runs them in alternating turns with the row
	// named by baseline ("list" when empty), which their ratio is to.
	serverOnly bool
	baseline   string
	// scale rows run as the user with -scale items (fixture.big).
	scale bool
	// tracing names the traced server the row runs on (traced.go): its
	// baseline is the same row on the untraced server.
	tracing string
	// minRatio is the target throughput ratio (0: none, the row informs);
	// maxP99 the latency bound (0: none).
	minRatio float64
	maxP99   time.Duration
	status   int
	// request builds the n-th request of worker w.
	request func(base string, fx *fixture, w, n, conns int) (*http.Request, error)
	// check looks at a body whose status was right; "" when it is good.
	check func(body []byte) string
}

// graphqlQuery asks for what the REST list returns (userID is REST's
// user_id), so the two compare like for like.
const graphqlQuery = `{ items(first: 20) { totalCount edges { node { id name description status userID createdAt updatedAt } } } }`

// deepPage is the page of the deep rows: near the end of the big user's
// items at 20 a page (page 4,990 of 5,000 at the default -scale).
func (fx *fixture) deepPage() int { return max(1, fx.bigItems/20-10) }

func checkGraphQL(body []byte) string {
	if bytes.Contains(body, []byte(`"errors"`)) || !bytes.Contains(body, []byte(`"totalCount"`)) {
		return "GraphQL errors or no totalCount: " + truncate(body)
	}
	return ""
}

// rows are the measured requests, reads first so that the writes of one
// server never change what the other reads.
var rows = []row{
	{
		name: "list", title: "GET /v1/items?limit=20", minRatio: 0.85, maxP99: 15 * time.Millisecond, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("GET", base+"/v1/items?limit=20", fx.token(w), nil)
		},
		check: wantSubstring(`"total":`),
	},
	{
		name: "get", title: "GET /v1/items/{id}", minRatio: 0.8, maxP99: 15 * time.Millisecond, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("GET", base+"/v1/items/"+fx.item(w, n, conns), fx.token(w), nil)
		},
	},
	{
		name: "graphql", title: "POST /graphql items(first: 20) + totalCount", serverOnly: true, minRatio: 0.8, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("POST", base+"/graphql", fx.token(w), jsonBody(map[string]string{"query": graphqlQuery}))
		},
		check: checkGraphQL,
	},
	// At scale: one user with -scale items (100,000). The targets are the
	// issue's: a list as fast at 100,000 as at 1,000 items, a deep page by
	// cursor as fast as the first, GraphQL close to REST.
	{
		name: "list-100k", title: "GET /v1/items?limit=20, 100k items", serverOnly: true, scale: true, baseline: "list", minRatio: 0.9, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("GET", base+"/v1/items?limit=20", fx.big.token, nil)
		},
		check: wantSubstring(`"total":`),
	},
	{
		name: "page-100k", title: "GET /v1/items?limit=20&page=(near the end), 100k items", serverOnly: true, scale: true, baseline: "list-100k", status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("GET", fmt.Sprintf("%s/v1/items?limit=20&page=%d", base, fx.deepPage()), fx.big.token, nil)
		},
		check: wantSubstring(`"id":"item_`),
	},
	{
		name: "cursor-100k", title: "GET /v1/items?limit=20&cursor=(near the end), 100k items", serverOnly: true, scale: true, baseline: "list-100k", minRatio: 0.9, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("GET", base+"/v1/items?limit=20&cursor="+url.QueryEscape(fx.big.deepCursor), fx.big.token, nil)
		},
		check: wantSubstring(`"id":"item_`),
	},
	{
		name: "graphql-100k", title: "POST /graphql items(first: 20) + totalCount, 100k items", serverOnly: true, scale: true, baseline: "list-100k", minRatio: 0.8, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("POST", base+"/graphql", fx.big.token, jsonBody(map[string]string{"query": graphqlQuery}))
		},
		check: checkGraphQL,
	},
	{
		name: "create", title: "POST /v1/items", minRatio: 0.7, status: http.StatusCreated,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("POST", base+"/v1/items", fx.token(w), jsonBody(map[string]string{
				"name":        fmt.Sprintf("Bench item %d-%d", w, n),
				"description": "Created by the benchmark.",
			}))
		},
	},
	{
		name: "update", title: "PUT /v1/items/{id}", minRatio: 0.7, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			return authed("PUT", base+"/v1/items/"+fx.item(w, n, conns), fx.token(w), jsonBody(map[string]string{
				"name": fmt.Sprintf("Renamed %d-%d", w, n),
			}))
		},
	},
	// Reads and writes at once: readers hold snapshots of the write-ahead
	// log while writers append to it, which is what made SQLite's log grow
	// (the footprint's WAL line; run it with -duration 60s for a minute of it).
	{
		name: "mixed", title: "mixed: of every 4, 2 GET item, 1 list, 1 PUT", minRatio: 0.7, status: http.StatusOK,
		request: func(base string, fx *fixture, w, n, conns int) (*http.Request, error) {
			switch n % 4 {
			case 0:
				return authed("PUT", base+"/v1/items/"+fx.item(w, n, conns), fx.token(w), jsonBody(map[string]string{
					"name": fmt.Sprintf("Mixed %d-%d", w, n),
				}))
			case 1:
				return authed("GET", base+"/v1/items?limit=20", fx.token(w), nil)
			default:
				return authed("GET", base+"/v1/items/"+fx.item(w, n, conns), fx.token(w), nil)
			}
		},
	},
}

func rowNames() []string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.name
	}
	return names
}

// selectRows returns the named rows in their standard order.
func selectRows(names []string) ([]row, error) {
	var out []row
	for _, r := range rows {
		if slices.Contains(names, r.name) {
			out = append(out, r)
		}
	}
	for _, n := range names {
		if !slices.Contains(rowNames(), n) {
			return nil, fmt.Errorf("unknown row %q; want some of %s", n, strings.Join(rowNames(), ","))
		}
	}
	return out, nil
}

// skip says why a row cannot run on this build: GraphQL answers 404 until
// the GraphQL endpoint is part of the server; the cursor row needs a server
// that gives cursors.
func (r row) skip(ctx context.Context, base string, fx *fixture) string {
	if r.name == "cursor-100k" && fx.big.deepCursor == "" {
		return "the server's item list gives no next_cursor"
	}
	if !strings.HasPrefix(r.name, "graphql") {
		return ""
	}
	req, err := r.request(base, fx, 0, 0, 1)
	if err != nil {
		return err.Error()
	}
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return err.Error()
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return "POST /graphql answers 404: the server has no GraphQL endpoint yet"
	case res.StatusCode != r.status:
		return fmt.Sprintf("POST /graphql answers %d: %s", res.StatusCode, truncate(body))
	}
	if msg := r.check(body); msg != "" {
		return msg
	}
	return ""
}

func authed(method, url, token string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// jsonBody encodes a request body (keys in sorted order).
func jsonBody(v map[string]string) []byte {
	b, _ := json.Marshal(v) // a map of strings always encodes
	return b
}

func wantSubstring(s string) func([]byte) string {
	return func(body []byte) string {
		if !bytes.Contains(body, []byte(s)) {
			return "body lacks " + s + ": " + truncate(body)
		}
		return ""
	}
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// token is the token of worker w's user: workers are spread over users.
func (fx *fixture) token(w int) string { return fx.tokens[w%len(fx.tokens)] }

// item is the n-th item of worker w: an item of its user, taken from a
// share no other worker of that user touches, so updates never contend for
// one row.
func (fx *fixture) item(w, n, conns int) string {
	users := len(fx.tokens)
	ids := fx.items[w%users]
	share := max(1, (conns+users-1)/users)
	k := w / users
	per := max(1, len(ids)/share)
	return ids[(k*per+n%per)%len(ids)]
}

// measurement is what one server did for one row.
type measurement struct {
	Requests   int
	Elapsed    time.Duration
	RPS        float64
	P50, P99   time.Duration
	Errors     int
	FirstError string
	PeakRSS    int64 // bytes; 0 when unknown
	PeakReset  bool  // false: PeakRSS is the process's lifetime peak
	// CPUPerReq is the server process's CPU time (user and system, all
	// threads) per answered request over the measured turns, in µs: unlike
	// req/s it barely moves with what else the machine runs. 0 when unknown.
	CPUPerReq float64
}

// contender is what one side of a row's measurement does: a server and the
// requests it gets.
type contender struct {
	p *process
	r row
	// before, when set, runs before each of its turns (and its warmup):
	// the pgwrites row sets the delay of the server's database link.
	before func()
}

// contenders are the two sides of a row: the server and the reference on
// the same requests, or, for rows the reference does not run, the server on
// the row and on its baseline row, so that both meet the same background
// load in alternating turns and their ratio holds on a busy machine.
func contenders(r row, srv, ref *process, traced tracedServers) ([]contender, error) {
	if !r.serverOnly {
		return []contender{{p: srv, r: r}, {p: ref, r: r}}, nil
	}
	first := srv
	if r.tracing != "" {
		if first = traced[r.tracing]; first == nil {
			return nil, fmt.Errorf("row %s: no server traced %s", r.name, r.tracing)
		}
	}
	for _, b := range rows {
		if b.name == r.baselineName() {
			return []contender{{p: first, r: r}, {p: srv, r: b}}, nil
		}
	}
	return nil, fmt.Errorf("row %s: unknown baseline row %q", r.name, r.baselineName())
}

// tally collects one server's results over the slices of a row.
type tally struct {
	p       *process
	r       row
	client  *http.Client
	lat     []time.Duration
	elapsed time.Duration
	errors  int
	first   string
	reset   bool
	seq     int           // numbers requests so that names and items differ across slices
	cpu     time.Duration // the server's CPU time over the recorded turns
	before  func()        // the contender's, before each turn
}

// prepare readies a turn of the tally's contender.
func (t *tally) prepare() {
	if t.before != nil {
		t.before()
	}
}

// turns is how many turns the servers take within a row: alternating
// short turns expose both to the same background load, so that the ratio
// holds on a busy machine.
const turns = 5

// measureRow warms each contender up, then drives them in alternating turns
// with a closed loop of o.conns connections until each has had o.duration.
// With a profiler, the first contender's CPU profile covers its turns and
// its allocation profile is taken at the end.
func measureRow(ctx context.Context, cs []contender, fx *fixture, o options, prof *profiler) ([]measurement, error) {
	tallies := make([]*tally, len(cs))
	r := cs[0].r
	for i, c := range cs {
		p := c.p
		tr := &http.Transport{
			MaxIdleConns:        o.conns,
			MaxIdleConnsPerHost: o.conns,
			MaxConnsPerHost:     o.conns,
			DisableCompression:  true,
		}
		defer tr.CloseIdleConnections()
		t := &tally{p: p, r: c.r, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, seq: 1 << 20}
		tallies[i] = t
		if o.warmup > 0 {
			t.prepare()
			if err := drive(ctx, t, t.r, fx, o.conns, o.warmup, false); err != nil {
				return nil, err
			}
		}
		t.before = c.before
		t.reset = p.resetPeakRSS()
	}
	turn := o.duration / turns
	for range turns {
		for i, t := range tallies {
			var profDone <-chan error
			if prof != nil && i == 0 {
				profDone = prof.cpu(ctx, t.p.name, r.name, turn)
			}
			t.prepare()
			if err := drive(ctx, t, t.r, fx, o.conns, turn, true); err != nil {
				return nil, err
			}
			if profDone != nil {
				if err := <-profDone; err != nil {
					return nil, err
				}
			}
		}
	}
	if prof != nil {
		if err := prof.allocs(ctx, r.name); err != nil {
			return nil, err
		}
	}
	out := make([]measurement, len(tallies))
	for i, t := range tallies {
		m := measurement{Elapsed: t.elapsed, Errors: t.errors, FirstError: t.first, PeakReset: t.reset}
		slices.Sort(t.lat)
		m.Requests = len(t.lat)
		if m.Requests > 0 {
			m.RPS = float64(m.Requests) / m.Elapsed.Seconds()
			m.CPUPerReq = float64(t.cpu.Microseconds()) / float64(m.Requests)
			m.P50, m.P99 = percentile(t.lat, 50), percentile(t.lat, 99)
		}
		if rss, err := t.p.peakRSS(); err == nil {
			m.PeakRSS = rss
		}
		out[i] = m
	}
	return out, nil
}

// drive runs conns workers against one server, each sending its next request
// as soon as the previous one is answered, until d has passed; with record
// the results go into the tally.
func drive(ctx context.Context, t *tally, r row, fx *fixture, conns int, d time.Duration, record bool) error {
	type result struct {
		lat      []time.Duration
		errors   int
		firstErr string
		err      error
	}
	results := make([]result, conns)
	before := readUsage(t.p.pid())
	start := time.Now()
	deadline := start.Add(d)
	seq := t.seq
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[w]
			res.lat = make([]time.Duration, 0, 1024)
			buf := bytes.NewBuffer(make([]byte, 0, 16<<10))
			for n := seq; ; n++ {
				if ctx.Err() != nil || !time.Now().Before(deadline) {
					return
				}
				req, err := r.request(t.p.base, fx, w, n, conns)
				if err != nil {
					res.err = err
					return
				}
				t0 := time.Now()
				resp, err := t.client.Do(req.WithContext(ctx))
				var msg string
				if err == nil {
					buf.Reset()
					_, err = buf.ReadFrom(resp.Body)
					resp.Body.Close()
				}
				res.lat = append(res.lat, time.Since(t0))
				switch {
				case err != nil:
					msg = err.Error()
				case resp.StatusCode != r.status:
					msg = fmt.Sprintf("status %d: %s", resp.StatusCode, truncate(buf.Bytes()))
				case r.check != nil:
					msg = r.check(buf.Bytes())
				}
				if msg != "" {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = msg
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	used := readUsage(t.p.pid()).since(before)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, res := range results {
		if res.err != nil {
			return res.err
		}
		t.seq = max(t.seq, seq+len(res.lat))
	}
	if !record {
		return nil
	}
	t.elapsed += elapsed
	t.cpu += used.cpu
	for _, res := range results {
		t.lat = append(t.lat, res.lat...)
		t.errors += res.errors
		if t.first == "" {
			t.first = res.firstErr
		}
	}
	return nil
}

// percentile is the p-th percentile of sorted, which is not empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)-1)*p/100]
}
