package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// row is one measured request kind.
type row struct {
	name, title string
	// serverOnly rows have no counterpart in the reference (GraphQL); their
	// ratio is to the server's REST list of the same run.
	serverOnly bool
	// minRatio is the target throughput ratio; maxP99 the latency bound (0: none).
	minRatio float64
	maxP99   time.Duration
	status   int
	// request builds the n-th request of worker w.
	request func(base string, fx *fixture, w, n, conns int) (*http.Request, error)
	// check looks at a body whose status was right; "" when it is good.
	check func(body []byte) string
}

const graphqlQuery = `{ items(first: 20) { totalCount edges { node { id name description status userID createdAt updatedAt } } } }`

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
		check: func(body []byte) string {
			if bytes.Contains(body, []byte(`"errors"`)) || !bytes.Contains(body, []byte(`"totalCount"`)) {
				return "GraphQL errors or no totalCount: " + truncate(body)
			}
			return ""
		},
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
// the GraphQL endpoint is part of the server.
func (r row) skip(ctx context.Context, base string, fx *fixture) string {
	if r.name != "graphql" {
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
}

// measure warms a server up, then drives it with a closed loop of
// o.conns connections for o.duration.
func measure(ctx context.Context, p *process, r row, fx *fixture, o options) (measurement, error) {
	tr := &http.Transport{
		MaxIdleConns:        o.conns,
		MaxIdleConnsPerHost: o.conns,
		MaxConnsPerHost:     o.conns,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if o.warmup > 0 {
		if _, err := drive(ctx, client, p.base, r, fx, o.conns, o.warmup, 0); err != nil {
			return measurement{}, err
		}
	}
	reset := p.resetPeakRSS()
	m, err := drive(ctx, client, p.base, r, fx, o.conns, o.duration, 1<<20)
	if err != nil {
		return m, err
	}
	m.PeakReset = reset
	if rss, err := p.peakRSS(); err == nil {
		m.PeakRSS = rss
	}
	return m, nil
}

// drive runs conns workers, each sending its next request as soon as the
// previous one is answered, until d has passed.
func drive(ctx context.Context, client *http.Client, base string, r row, fx *fixture, conns int, d time.Duration, seq int) (measurement, error) {
	type result struct {
		lat      []time.Duration
		errors   int
		firstErr string
		err      error
	}
	results := make([]result, conns)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[w]
			res.lat = make([]time.Duration, 0, 4096)
			buf := bytes.NewBuffer(make([]byte, 0, 16<<10))
			for n := seq; ; n++ {
				if ctx.Err() != nil || !time.Now().Before(deadline) {
					return
				}
				req, err := r.request(base, fx, w, n, conns)
				if err != nil {
					res.err = err
					return
				}
				t0 := time.Now()
				resp, err := client.Do(req.WithContext(ctx))
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
	m := measurement{Elapsed: time.Since(start)}
	if err := ctx.Err(); err != nil {
		return m, err
	}
	var all []time.Duration
	for _, res := range results {
		if res.err != nil {
			return m, res.err
		}
		all = append(all, res.lat...)
		m.Errors += res.errors
		if m.FirstError == "" {
			m.FirstError = res.firstErr
		}
	}
	slices.Sort(all)
	m.Requests = len(all)
	if m.Requests > 0 {
		m.RPS = float64(m.Requests) / m.Elapsed.Seconds()
		m.P50 = all[(len(all)-1)*50/100]
		m.P99 = all[(len(all)-1)*99/100]
	}
	return m, nil
}
