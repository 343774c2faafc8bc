// Command bench is the reproducible benchmark behind `make bench`. It builds
// the server and the lean reference server (bench/reference), seeds a fresh
// database (SQLite, or PostgreSQL with BENCH_DATABASE_URL) with 10 users and
// 10,000 items (and, for the rows at scale, one user with 100,000), starts both, then drives each measured request with a
// closed loop of 32 connections for a fixed time and prints requests/s, p50,
// p99, errors and peak RSS of the server, each as a ratio to the reference
// measured in the same run. With taskset the servers run on CPU 0 and the
// load generator on CPU 1 (the standard configuration).
//
//	go run ./bench/cmd/bench [-duration 10s] [-rows list,get] [-scale 100000] [-write]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the command line of a run.
type options struct {
	duration, warmup time.Duration
	conns            int
	users, items     int
	scale            int // items of the one user of the rows at scale
	rows             []string
	write            bool
	out              string
	keep             bool
	profile          string // folder for the server's CPU and allocation profiles, "" for none
	note             string
	databaseURL      string        // BENCH_DATABASE_URL: PostgreSQL to run on instead of SQLite
	pgLatency        time.Duration // the pgwrites row's delay each way between server and PostgreSQL
	pgItems, pgUsers int           // the pgscale row's items and users at scale
}

func main() {
	var o options
	var rows string
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per row and server, taken in 5 alternating turns")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each measurement")
	flag.IntVar(&o.conns, "conns", 32, "concurrent connections (closed loop: one request in flight each)")
	flag.IntVar(&o.users, "users", 10, "seeded users, each with an API key")
	flag.IntVar(&o.items, "items", 10000, "seeded items, spread over the users")
	flag.IntVar(&o.scale, "scale", 100000, "items of the one more user whose list the rows at scale (…-100k) read")
	flag.StringVar(&rows, "rows", strings.Join(append(rowNames(), "realtime", "pgwrites", "pgscale", "sizes"), ","), "rows to run, comma-separated (realtime: 1,000 event stream subscribers, server only;\npgwrites: PostgreSQL creates through a delayed link and direct, at 8 and 64 connections, 32 owners and one;\npgscale: PostgreSQL list, get, GraphQL list and create at -pg-items items against 10,000, schemas of their own seeded by COPY;\nsizes: the first page of an owner of 20,000 items against one of -items/-users, one request at a time)")
	flag.DurationVar(&o.pgLatency, "pg-latency", time.Millisecond, "pgwrites: delay each way of the link between server and PostgreSQL (1ms ≈ 2 ms round trip)")
	flag.IntVar(&o.pgItems, "pg-items", 1_000_000, "pgscale: items at scale, a multiple of -pg-users")
	flag.IntVar(&o.pgUsers, "pg-users", 10_000, "pgscale: users at scale, each with an API key and the same number of items")
	flag.BoolVar(&o.write, "write", false, "record the run in BENCHMARKS.md as the current section of its set of rows (the runs it replaces become history lines)")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "file that -write records into")
	flag.BoolVar(&o.keep, "keep", false, "keep the work folder (binaries, database, server logs) and the pgscale row's PostgreSQL schemas")
	flag.StringVar(&o.note, "note", "", "a remark recorded with the run (for example what else loaded the machine)")
	flag.StringVar(&o.profile, "profile", "", "write the server's CPU and allocation profiles of each row into this folder\n(builds the server with -tags benchpprof; profiling slows the server, so its figures are not results)")
	flag.Parse()
	o.databaseURL = os.Getenv("BENCH_DATABASE_URL")
	for _, r := range strings.Split(rows, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.rows = append(o.rows, r)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run is one whole benchmark: build, seed, start, measure, report.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	realtime := slices.Contains(o.rows, "realtime")
	pgWrites := slices.Contains(o.rows, "pgwrites")
	pgScale := slices.Contains(o.rows, "pgscale")
	sizes := slices.Contains(o.rows, "sizes")
	selected, err := selectRows(slices.DeleteFunc(slices.Clone(o.rows), func(s string) bool {
		return s == "realtime" || s == "pgwrites" || s == "pgscale" || s == "sizes"
	}))
	if err != nil {
		return err
	}
	if o.conns < 1 || o.users < 1 || o.items < o.users || o.duration <= 0 {
		return errors.New("want -conns ≥ 1, -users ≥ 1, -items ≥ -users and a positive -duration")
	}
	scale := 0
	for _, r := range selected {
		if r.scale {
			scale = o.scale
		}
	}
	if scale > 0 && scale < 40 {
		return errors.New("want -scale ≥ 40: the deep page is near the end of at least two pages of 20")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "itemsvc-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(stderr, "work folder:", work)
	} else {
		defer os.RemoveAll(work)
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }

	progress("building the server and the reference")
	bins, err := build(ctx, root, work, o.profile != "")
	if err != nil {
		return err
	}
	db, err := newDatabase(ctx, o.databaseURL, work)
	if err != nil {
		return err
	}
	defer db.drop()

	env := serverEnv(db.url)
	var prof *profiler
	if o.profile != "" {
		if prof, err = newProfiler(o.profile); err != nil {
			return err
		}
		env = append(env, "BENCH_PPROF_ADDR="+prof.addr)
	}
	progress("seeding %s: %d users, %d items; %d items of one more user", db.dialect, o.users, o.items, scale)
	t0 := time.Now()
	fx, err := seed(ctx, bins.server, env, db, o.users, o.items, scale, sizes)
	if err != nil {
		return err
	}

	progress("seeded in %s", time.Since(t0).Round(100*time.Millisecond))
	refURL, err := db.referenceURL(work)
	if err != nil {
		return err
	}

	// Described before the load generator is pinned, which would make it see
	// one CPU.
	machine, err := describeMachine(root, o.out)
	if err != nil {
		return err
	}
	pin := detectPinning()
	srv, err := startProcess(ctx, "server", pin.serverCPU, work, env, bins.server, "serve")
	if err != nil {
		return err
	}
	defer srv.stop()
	ref, err := startProcess(ctx, "reference", pin.serverCPU, work, env, bins.reference, "-database-url", refURL)
	if err != nil {
		return err
	}
	defer ref.stop()
	foot := footprint{ServerBinary: bins.serverSize, RefBinary: bins.refSize, WALMax: -1}
	if foot.ServerIdle, err = srv.rss(); err != nil {
		return err
	}
	if foot.RefIdle, err = ref.rss(); err != nil {
		return err
	}
	traced, rcv, err := startTracedServers(ctx, selected, pin.serverCPU, work, env, bins.server, &foot)
	if err != nil {
		return err
	}
	defer traced.stop()
	if rcv != nil {
		defer rcv.stop()
	}
	var wal *walWatch
	if db.wal != "" {
		wal = watchWAL(db.wal)
	}
	if err := fx.login(ctx, srv.base); err != nil {
		return err
	}
	if err := pin.pinSelf(); err != nil {
		return err
	}

	res := runResult{
		Config:   pin.describe(),
		Dialect:  db.dialect,
		Users:    o.users,
		Items:    o.items,
		Scale:    scale,
		Conns:    o.conns,
		Duration: o.duration,
		Warmup:   o.warmup,
		Started:  time.Now().UTC(),
		Note:     o.note,
	}
	// The sizes row runs before the rows that write, which would add to
	// its small owner's items.
	var sizesLine string
	if sizes {
		progress("sizes: the first page of owners of %d and %d items, one request at a time", len(fx.items[0]), sizesItems)
		sz, err := measureSizes(ctx, srv.base, fx)
		if err != nil {
			return fmt.Errorf("sizes: %w", err)
		}
		sizesLine = sz.line()
	}
	for _, r := range selected {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := rowResult{Row: r}
		if note := r.skip(ctx, srv.base, fx); note != "" {
			row.Skipped = note
			progress("%s: skipped: %s", r.title, note)
			res.Rows = append(res.Rows, row)
			continue
		}
		cs, err := contenders(r, srv, ref, traced)
		if err != nil {
			return err
		}
		if r.serverOnly {
			if note := cs[1].r.skip(ctx, srv.base, fx); note != "" {
				row.Skipped = "its baseline " + cs[1].r.name + ": " + note
				progress("%s: skipped: %s", r.title, row.Skipped)
				res.Rows = append(res.Rows, row)
				continue
			}
			progress("%s: %s on the server, in turns with its %s", r.title, o.duration, cs[1].r.name)
		} else {
			progress("%s: %s on the server and the reference", r.title, o.duration)
		}
		if wal != nil {
			wal.take()
		}
		commits0, txs0 := batchCounts(srv.base)
		ms, err := measureRow(ctx, cs, fx, o, prof)
		if err != nil {
			return fmt.Errorf("%s: %w", r.title, err)
		}
		if wal != nil {
			foot.WALRows = append(foot.WALRows, r.name+" "+mib(wal.take()))
		}
		if commits1, txs1 := batchCounts(srv.base); commits1 > commits0 {
			foot.BatchRows = append(foot.BatchRows, fmt.Sprintf("%s %.1f", r.name, (txs1-txs0)/(commits1-commits0)))
		}
		row.Server, row.Reference = ms[0], ms[1]
		res.Rows = append(res.Rows, row)
	}
	if realtime {
		rt, err := measureRealtime(ctx, srv, fx, o, prof, progress)
		if err != nil {
			return fmt.Errorf("realtime: %w", err)
		}
		res.Realtime = &rt
	}
	if pgWrites {
		pw, err := measurePGWrites(ctx, db, bins.server, work, pin, o, progress)
		if err != nil {
			return fmt.Errorf("pgwrites: %w", err)
		}
		res.PGWrites = &pw
	}
	if pgScale {
		ps, err := measurePGScale(ctx, db, bins.server, work, pin, o, progress)
		if err != nil {
			return fmt.Errorf("pgscale: %w", err)
		}
		res.PGScale = &ps
	}
	if wal != nil {
		foot.WALMax = wal.finish()
	}
	if rcv != nil {
		progress("the OTLP receiver took %s", rcv)
	}
	res.Foot = foot
	res.finish()
	printResult(stdout, res)
	if sizesLine != "" {
		fmt.Fprintln(stdout, "\n"+sizesLine)
	}
	if prof != nil {
		fmt.Fprintf(stdout, "\nprofiles of the server in %s (profiling slowed it: the figures above are not results); read them with\n  go tool pprof -top %s\n",
			o.profile, filepath.Join(o.profile, "<row>.cpu.*.pprof"))
	}
	if o.write {
		if err := writeMarkdown(o.out, res, machine); err != nil {
			return err
		}
		progress("recorded in %s", o.out)
	}
	return nil
}
