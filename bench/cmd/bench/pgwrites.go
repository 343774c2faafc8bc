package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The pgwrites row: POST /v1/items on PostgreSQL, the server
// reaching the database through a link with -pg-latency each way
// (delayProxy) and, in alternating turns, through the same proxy without
// delay (the direct link), at 8 and 64 connections (the load's and the
// server's pool, DATABASE_MAX_CONNS), for many owners and for one. One
// server per connection count: two pools of 64 would pass PostgreSQL's
// default max_connections (100).
// The targets: through the link at 64 connections at least pgWritesMinRatio
// of the direct link, and at 64 connections at least as much as at 8:
// writers must not queue on one another across the cluster.
const (
	pgWritesOwners   = 32
	pgWritesMinRatio = 0.7
)

// pgWritesConns are the connection counts the row compares.
var pgWritesConns = []int{8, 64}

// pgWritesCase is one measured line: owners × connections, direct and
// through the link.
type pgWritesCase struct {
	Owners, Conns int
	Linked        measurement // through the delayed link
	Direct        measurement
}

// pgWritesResult is the row.
type pgWritesResult struct {
	Latency time.Duration // each way
	Cases   []pgWritesCase
	Skipped string
}

// measurePGWrites runs the row: for each connection count a server with a
// pool of that size, through the proxy.
func measurePGWrites(ctx context.Context, db *database, bin, work string, pin pinning, o options, progress func(string, ...any)) (pgWritesResult, error) {
	res := pgWritesResult{Latency: o.pgLatency}
	if db.dialect != "postgres" {
		res.Skipped = "needs PostgreSQL (BENCH_DATABASE_URL)"
		return res, nil
	}
	u, err := url.Parse(db.url)
	if err != nil {
		return res, err
	}
	proxy, err := startDelayProxy(u.Host, o.pgLatency)
	if err != nil {
		return res, err
	}
	defer proxy.close()
	linked := *u
	linked.Host = proxy.addr()

	// The owners: users of their own, made with the server binary.
	env := serverEnv(db.url)
	var keys []string
	for i := range pgWritesOwners {
		key, err := runCommand(ctx, bin, env, "keys", "create", "--email", fmt.Sprintf("pgwrites%02d@example.com", i), "--name", fmt.Sprintf("PG Writer %02d", i))
		if err != nil {
			return res, err
		}
		keys = append(keys, key)
	}
	var tokens []string
	for _, conns := range pgWritesConns {
		cs, err := measurePGWritesAt(ctx, proxy, linked.String(), bin, work, pin, o, conns, keys, &tokens, progress)
		if err != nil {
			return res, err
		}
		res.Cases = append(res.Cases, cs...)
	}
	return res, nil
}

// measurePGWritesAt measures the row's cases at conns connections, with a
// server of its own (a pool of conns) through proxy, stopped at the end.
func measurePGWritesAt(ctx context.Context, proxy *delayProxy, linkedURL, bin, work string, pin pinning, o options, conns int, keys []string, tokens *[]string, progress func(string, ...any)) ([]pgWritesCase, error) {
	env := append(serverEnv(linkedURL), "DATABASE_MAX_CONNS="+strconv.Itoa(conns))
	srv, err := startProcess(ctx, fmt.Sprintf("pgwrites-%d", conns), pin.serverCPU, work, env, bin, "serve")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if *tokens == nil {
		for _, key := range keys {
			tok, err := loginKey(ctx, srv.base, key)
			if err != nil {
				return nil, err
			}
			*tokens = append(*tokens, tok)
		}
	}
	var out []pgWritesCase
	for _, owners := range []int{pgWritesOwners, 1} {
		progress("pgwrites: %d owners, %d connections: %s through the %s link and direct", owners, conns, o.duration, 2*o.pgLatency)
		r := pgWritesRow((*tokens)[:owners])
		oc := o
		oc.conns = conns
		cs := []contender{
			{p: srv, r: r, before: func() { proxy.set(o.pgLatency) }},
			{p: srv, r: r, before: func() { proxy.set(0) }},
		}
		ms, err := measureRow(ctx, cs, &fixture{}, oc, nil)
		if err != nil {
			return nil, fmt.Errorf("pgwrites: %w", err)
		}
		out = append(out, pgWritesCase{Owners: owners, Conns: conns, Linked: ms[0], Direct: ms[1]})
	}
	return out, nil
}

// pgWritesRow creates items as the owners, worker w as owner w mod owners.
func pgWritesRow(tokens []string) row {
	return row{
		name: "pgwrites", title: "POST /v1/items (PostgreSQL)", status: http.StatusCreated,
		request: func(base string, _ *fixture, w, n, _ int) (*http.Request, error) {
			return authed("POST", base+"/v1/items", tokens[w%len(tokens)], jsonBody(map[string]string{
				"name":        fmt.Sprintf("PG item %d-%d", w, n),
				"description": "Created by the benchmark.",
			}))
		},
	}
}

// runCommand runs the server binary once and returns its output.
func runCommand(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("server %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// find returns the case of owners and conns.
func (r pgWritesResult) find(owners, conns int) (pgWritesCase, bool) {
	for _, c := range r.Cases {
		if c.Owners == owners && c.Conns == conns {
			return c, true
		}
	}
	return pgWritesCase{}, false
}

// print writes the row; markdown makes it a list.
func (r pgWritesResult) print(w io.Writer, markdown bool) {
	p := "pgwrites: "
	if markdown {
		p = "- pgwrites: "
	}
	if r.Skipped != "" {
		fmt.Fprintf(w, "%sskipped: %s\n", p, r.Skipped)
		return
	}
	link := fmt.Sprintf("%s link", 2*r.Latency)
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%sPOST /v1/items, %d owner(s), %d connections: through the %s %.0f/s (p99 %s ms), direct %.0f/s (p99 %s ms) = %s, errors %d/%d\n",
			p, c.Owners, c.Conns, link, c.Linked.RPS, ms(c.Linked.P99), c.Direct.RPS, ms(c.Direct.P99), throughputRatio(c.Linked.RPS, c.Direct.RPS), c.Linked.Errors, c.Direct.Errors)
	}
	for _, c := range r.Cases {
		for _, m := range []measurement{c.Linked, c.Direct} {
			if m.FirstError != "" {
				fmt.Fprintf(w, "%s%d owner(s), %d connections: first error: %s\n", p, c.Owners, c.Conns, m.FirstError)
			}
		}
	}
	for _, owners := range []int{pgWritesOwners, 1} {
		hi, ok1 := r.find(owners, 64)
		lo, ok2 := r.find(owners, 8)
		if !ok1 || !ok2 {
			continue
		}
		verdict := "ok"
		if hi.Linked.RPS < pgWritesMinRatio*hi.Direct.RPS || hi.Linked.RPS < lo.Linked.RPS || hi.Linked.Errors+hi.Direct.Errors > 0 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "%s%d owner(s): through the %s at 64 connections %s× direct (target ≥ %.1f×), %s× its 8 connections (target ≥ 1): %s\n",
			p, owners, link, throughputRatio(hi.Linked.RPS, hi.Direct.RPS), pgWritesMinRatio, throughputRatio(hi.Linked.RPS, lo.Linked.RPS), verdict)
	}
	// One owner's writes against the same load spread over many: what a
	// row every write of one owner touches would cost.
	one, ok1 := r.find(1, 64)
	many, ok2 := r.find(pgWritesOwners, 64)
	if ok1 && ok2 {
		verdict := "ok"
		if one.Linked.RPS < pgWritesMinRatio*many.Linked.RPS {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "%sone owner against %d, through the %s at 64 connections: %s× (target ≥ %.1f×): %s\n",
			p, pgWritesOwners, link, throughputRatio(one.Linked.RPS, many.Linked.RPS), pgWritesMinRatio, verdict)
	}
}
