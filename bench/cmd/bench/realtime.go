package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The realtime row: subscribers on GET /v1/events/stream, each
// following the events of one seeded user (realtimeSubs spread over the
// users, so each change reaches realtimeSubs/users streams), while changes
// arrive at realtimeRate a second; then REST create throughput with and
// without those streams connected, and how soon the events of those
// saturating creates reach the streams.
const (
	realtimeSubs   = 1000
	realtimeRate   = 200
	realtimeMaxP99 = 50 * time.Millisecond
	// realtimeMaxBusyP99 is the p99 from a create's sending to its event
	// at a subscriber while the creates saturate the server's CPU.
	realtimeMaxBusyP99 = 100 * time.Millisecond
	// realtimeMinRatio is the create throughput with the streams connected
	// over without them.
	realtimeMinRatio = 0.65
	// realtimeMaxTail is the create p99 with the streams connected over
	// without them.
	realtimeMaxTail = 3.0
	// realtimeMaxFanout is the server CPU one event delivered during the
	// creates may cost, beyond the creates themselves.
	realtimeMaxFanout = 2 * time.Microsecond
	// realtimeMaxRSS bounds the server's resident memory during the row.
	realtimeMaxRSS = 100 << 20
)

// realtimeResult is the realtime row.
type realtimeResult struct {
	Subscribers, Rate   int
	PerUser             int           // subscribers that each change reaches
	Changes             int           // changes made at Rate
	Delivered, Expected int           // stream events received, and due
	P50, P99, Max       time.Duration // write (event timestamp) to subscriber
	// BusyP50, BusyP99 and BusyMax are the times from the sending of a
	// create to its event at each subscriber during the creates with the
	// streams connected (the server's CPU saturated); BusyTimed events
	// were timed of BusyDue (the creates answered 201, times their
	// owner's subscribers).
	BusyP50, BusyP99, BusyMax time.Duration
	BusyTimed, BusyDue        int
	RSSBefore, RSSWith        int64 // server RSS (VmRSS) without and with the streams
	// RSSPeak is the largest server RSS sampled from the streams' opening
	// to their close, and RSSAfter the RSS once they have all closed.
	RSSPeak, RSSAfter     int64
	CreateWithout, Create float64 // POST /v1/items per second, without and with the streams
	// The creates' latency percentiles, without and with the streams.
	CreateP50Without, CreateP99Without, CreateP50, CreateP99 time.Duration
	// What the creates cost, without and with the streams: the server's
	// CPU and write syscalls over the creates made, and the share of its
	// CPU the load generator used (which also reads the streams).
	ServerWithout, ServerWith spent
	CreatesWithout, Creates   int64
	// ServerRate is the server's usage over the changes at Rate, and
	// DeliveredWith the events the streams received during the creates
	// with them connected: what one delivered event costs the server.
	ServerRate            spent
	DeliveredWith         int64
	LoadWithout, LoadWith spent
	Errors                int
	FirstError            string
	// Dropped streams were ended by the server before the end of the row,
	// counted by why.
	Dropped int
	Why     map[string]int
}

// misses lists the row's targets it missed.
func (r realtimeResult) misses() []string {
	var out []string
	if r.P99 > realtimeMaxP99 {
		out = append(out, "write→subscriber p99")
	}
	if r.Delivered != r.Expected {
		out = append(out, "events lost")
	}
	if r.BusyP99 > realtimeMaxBusyP99 {
		out = append(out, "delivery p99 during saturating creates")
	}
	if r.Create < realtimeMinRatio*r.CreateWithout {
		out = append(out, "creates with ÷ without")
	}
	if r.CreateP99Without > 0 && float64(r.CreateP99) > realtimeMaxTail*float64(r.CreateP99Without) {
		out = append(out, "create p99 with ÷ without")
	}
	if r.DeliveredWith > 0 && r.CreatesWithout > 0 {
		if cpu, _ := r.fanoutPerEvent(); cpu > float64(realtimeMaxFanout.Microseconds()) {
			out = append(out, "CPU per delivered event")
		}
	}
	if r.RSSPeak > realtimeMaxRSS {
		out = append(out, "peak RSS")
	}
	if r.Dropped > 0 {
		out = append(out, "streams ended by the server")
	}
	return out
}

func (r realtimeResult) verdict() string {
	if len(r.misses()) == 0 {
		return "ok"
	}
	return "MISSED"
}

// print writes the row; markdown makes it a list.
func (r realtimeResult) print(w io.Writer, markdown bool) {
	p := "realtime: "
	if markdown {
		p = "- realtime: "
	}
	fmt.Fprintf(w, "%s%d SSE subscribers (each change reaches %d: its owner's), %d changes at %d/s: %d of %d events delivered; write→subscriber p50 %s ms, p99 %s ms (target < %s ms), max %s ms; server RSS %s MiB idle → %s MiB with the subscribers\n",
		p, r.Subscribers, r.PerUser, r.Changes, r.Rate, r.Delivered, r.Expected,
		ms(r.P50), ms(r.P99), ms(realtimeMaxP99), ms(r.Max), mib(r.RSSBefore), mib(r.RSSWith))
	if r.BusyDue > 0 {
		fmt.Fprintf(w, "%sdelivery during the saturating creates (a create's sending → its event at a subscriber): p50 %s ms, p99 %s ms (target ≤ %s ms), max %s ms; %d events timed of %d due\n",
			p, ms(r.BusyP50), ms(r.BusyP99), ms(realtimeMaxBusyP99), ms(r.BusyMax), r.BusyTimed, r.BusyDue)
	}
	fmt.Fprintf(w, "%sPOST /v1/items with the %d subscribers connected: %.0f/s vs %.0f/s without = %s (target ≥ %.2f×): %s\n",
		p, r.Subscribers, r.Create, r.CreateWithout, throughputRatio(r.Create, r.CreateWithout), realtimeMinRatio, r.verdict())
	if m := r.misses(); len(m) > 0 {
		fmt.Fprintf(w, "%smissed: %s\n", p, strings.Join(m, ", "))
	}
	if r.CreateP99Without > 0 {
		fmt.Fprintf(w, "%screate latency without → with the subscribers: p50 %s → %s ms, p99 %s → %s ms (p99 with ÷ without %.2f, target ≤ %.0f); server RSS peak %s MiB during the row (target ≤ %s MiB), %s MiB once the streams closed\n",
			p, ms(r.CreateP50Without), ms(r.CreateP50), ms(r.CreateP99Without), ms(r.CreateP99),
			float64(r.CreateP99)/float64(r.CreateP99Without), realtimeMaxTail, mib(r.RSSPeak), mib(realtimeMaxRSS), mib(r.RSSAfter))
	}
	if r.CreatesWithout > 0 && r.Creates > 0 {
		cpu0, sys0, w0 := r.ServerWithout.perOp(r.CreatesWithout)
		cpu1, sys1, w1 := r.ServerWith.perOp(r.Creates)
		fmt.Fprintf(w, "%sper create without → with the subscribers: server CPU %.0f → %.0f µs (system %.0f → %.0f), server write syscalls %.1f → %.1f; server busy %.0f%% → %.0f%%, load generator busy %.0f%% → %.0f%% of its CPU\n",
			p, cpu0, cpu1, sys0, sys1, w0, w1, 100*r.ServerWithout.busy(), 100*r.ServerWith.busy(), 100*r.LoadWithout.busy(), 100*r.LoadWith.busy())
	}
	if r.Delivered > 0 && r.DeliveredWith > 0 && r.CreatesWithout > 0 {
		cpu, _, writes := r.ServerRate.perOp(int64(r.Delivered))
		fanout, fanoutWrites := r.fanoutPerEvent()
		fmt.Fprintf(w, "%sper delivered event: server CPU %.2f µs and %.3f write syscalls at %d changes/s (the changes' own cost included); %.2f µs (target ≤ %.0f) and %.3f write syscalls during the creates with the subscribers (%d events; the creates' own cost, as measured without the subscribers, taken out)\n",
			p, cpu, writes, r.Rate, fanout, float64(realtimeMaxFanout.Microseconds()), fanoutWrites, r.DeliveredWith)
	}
	fmt.Fprintf(w, "%sstreams ended by the server before the end: %d of %d", p, r.Dropped, r.Subscribers)
	whys := slices.Sorted(maps.Keys(r.Why))
	for i, why := range whys {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(w, "%s%d %s", sep, r.Why[why], why)
	}
	fmt.Fprintln(w)
	if r.Errors > 0 {
		fmt.Fprintf(w, "%s%d errors, first: %s\n", p, r.Errors, r.FirstError)
	}
}

// fanoutPerEvent is the server CPU (µs) and write syscalls that each event
// delivered during the creates with the subscribers cost beyond the creates
// themselves, at their cost without the subscribers.
func (r realtimeResult) fanoutPerEvent() (cpuMicros, writes float64) {
	cpu0, _, w0 := r.ServerWithout.perOp(r.CreatesWithout)
	n := float64(r.DeliveredWith)
	cpuMicros = (float64(r.ServerWith.cpu.Microseconds()) - cpu0*float64(r.Creates)) / n
	writes = (float64(r.ServerWith.writes) - w0*float64(r.Creates)) / n
	return cpuMicros, writes
}

// pid is the process id, as /proc names it.
func (p *process) pid() string { return strconv.Itoa(p.cmd.Process.Pid) }

// currentRSS is the process's resident set size now (VmRSS) in bytes.
func (p *process) currentRSS() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// creates is what createRate measured: the successful creates per second
// and how many, and their latency percentiles.
type creates struct {
	rate     float64
	n        int64
	p50, p99 time.Duration
}

// createRate drives POST /v1/items with conns closed-loop workers for d,
// each create stamped with the time it is sent (stampedCreate).
func createRate(ctx context.Context, client *http.Client, base string, fx *fixture, conns int, d time.Duration, errs *errorTally) creates {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	lats := make([][]time.Duration, conns)
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				sent := time.Now()
				req, err := stampedCreate(base, fx, w, n+1_000_000, sent)
				if err != nil {
					errs.add(err.Error())
					return
				}
				res, err := client.Do(req.WithContext(ctx))
				if err != nil {
					if ctx.Err() == nil {
						errs.add(err.Error())
					}
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusCreated {
					done.Add(1)
					lats[w] = append(lats[w], time.Since(sent))
				} else {
					errs.add(fmt.Sprintf("create: status %d", res.StatusCode))
				}
			}
		}()
	}
	wg.Wait()
	c := creates{rate: float64(done.Load()) / time.Since(start).Seconds(), n: done.Load()}
	all := slices.Concat(lats...)
	slices.Sort(all)
	if len(all) > 0 {
		c.p50, c.p99 = percentile(all, 50), percentile(all, 99)
	}
	return c
}

// stampedCreate is the create row's POST /v1/items whose description
// carries sent, the time it is sent: its event then tells a subscriber how
// long it took from the create's sending (sendStamp).
func stampedCreate(base string, fx *fixture, w, n int, sent time.Time) (*http.Request, error) {
	return authed("POST", base+"/v1/items", fx.token(w), jsonBody(map[string]string{
		"name":        fmt.Sprintf("Bench item %d-%d", w, n),
		"description": sentMark + strconv.FormatInt(sent.UnixNano(), 10),
	}))
}

// sentMark precedes the sending time (Unix nanoseconds) in the description
// of a stamped create.
const sentMark = "Created by the benchmark, sent at "

// sendStamp finds the sending time of a stamped create in the JSON of its
// event, without decoding the rest (eventTimestamp).
func sendStamp(data []byte) (time.Time, bool) {
	i := bytes.Index(data, []byte(sentMark))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(sentMark):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	ns, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// errorTally counts errors and keeps the first.
type errorTally struct {
	mu    sync.Mutex
	n     int
	first string
}

func (e *errorTally) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		e.first = s
	}
	e.n++
}

// whyTally counts the streams the server ended, by why.
type whyTally struct {
	mu sync.Mutex
	by map[string]int
}

func (t *whyTally) add(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[string]int{}
	}
	t.by[why]++
}

func (t *whyTally) counts() (int, map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.by {
		n += c
	}
	return n, maps.Clone(t.by)
}

// errorCode is the code of a stream's error event's data line, or the line
// itself when it has none.
func errorCode(line []byte) string {
	data, _ := bytes.CutPrefix(line, []byte("data: "))
	var body struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		return body.Code
	}
	return truncate(line)
}

// watchRSS samples the process's RSS every rssEvery until the function it
// returns is called, which returns the largest seen.
func watchRSS(p *process) func() int64 {
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		peak := p.currentRSS()
		t := time.NewTicker(rssEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				peak = max(peak, p.currentRSS())
			case <-stop:
				done <- max(peak, p.currentRSS())
				return
			}
		}
	}()
	return func() int64 {
		close(stop)
		return <-done
	}
}

// rssEvery is how often watchRSS samples.
const rssEvery = 20 * time.Millisecond

// settledRSS is the process's RSS once it stops falling (its streams'
// memory given back), within two seconds.
func (p *process) settledRSS() int64 {
	last := p.currentRSS()
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		cur := p.currentRSS()
		if cur >= last {
			return cur
		}
		last = cur
	}
	return last
}

// measureRealtime runs the realtime row on the server.
func measureRealtime(ctx context.Context, srv *process, fx *fixture, o options, prof *profiler, progress func(string, ...any)) (realtimeResult, error) {
	r := realtimeResult{Subscribers: realtimeSubs, Rate: realtimeRate}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: realtimeSubs + o.conns, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	var errs errorTally
	d := o.duration

	progress("realtime: POST /v1/items for %s without subscribers", d)
	createRate(ctx, client, srv.base, fx, o.conns, o.warmup, &errs)
	srv0, load0 := readUsage(srv.pid()), readUsage("self")
	without := createRate(ctx, client, srv.base, fx, o.conns, d, &errs)
	r.CreateWithout, r.CreatesWithout, r.CreateP50Without, r.CreateP99Without = without.rate, without.n, without.p50, without.p99
	r.ServerWithout, r.LoadWithout = readUsage(srv.pid()).since(srv0), readUsage("self").since(load0)
	r.RSSBefore = srv.currentRSS()
	peak := watchRSS(srv)

	progress("realtime: opening %d SSE subscribers", realtimeSubs)
	subCtx, closeSubs := context.WithCancel(ctx)
	defer closeSubs()
	var (
		measuring atomic.Bool
		received  atomic.Int64
		// counting: the events received are counted (frames), not timed.
		counting atomic.Bool
		frames   atomic.Int64
		latMu    sync.Mutex
		lats     = make([]time.Duration, 0, realtimeSubs*realtimeRate*int(d/time.Second+1)/len(fx.tokens))
		opened   sync.WaitGroup
		readers  sync.WaitGroup
		// dropped counts the streams the server ended while they were
		// still wanted (SLOW_CONSUMER): the creates that follow then reach
		// fewer subscribers, and their rate says nothing of the row.
		dropped whyTally
		// busy holds each subscriber's times from a stamped create's
		// sending to its event (stampedCreate), stamped counts them.
		busy    = make([][]time.Duration, realtimeSubs)
		stamped atomic.Int64
	)
	opened.Add(realtimeSubs)
	for i := range realtimeSubs {
		readers.Add(1)
		go func() {
			defer readers.Done()
			req, _ := http.NewRequestWithContext(subCtx, "GET", srv.base+"/v1/events/stream", nil)
			req.Header.Set("Authorization", "Bearer "+fx.tokens[i%len(fx.tokens)])
			req.Header.Set("Accept", "text/event-stream")
			res, err := client.Do(req)
			opened.Done()
			if err != nil {
				errs.add("subscribe: " + err.Error())
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				errs.add(fmt.Sprintf("subscribe: status %d", res.StatusCode))
				return
			}
			sc := bufio.NewScanner(res.Body)
			errorEvent := false
			for sc.Scan() {
				line := sc.Bytes()
				if bytes.Equal(line, []byte("event: error")) {
					errorEvent = true
					continue
				}
				if errorEvent {
					dropped.add(errorCode(line))
					return
				}
				data, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok {
					continue
				}
				if counting.Load() {
					frames.Add(1)
				}
				if sent, ok := sendStamp(data); ok {
					busy[i] = append(busy[i], time.Since(sent))
					stamped.Add(1)
					continue
				}
				if !measuring.Load() {
					continue
				}
				now := time.Now()
				ts, ok := eventTimestamp(data)
				if !ok {
					errs.add("event without a timestamp: " + truncate(data))
					continue
				}
				received.Add(1)
				latMu.Lock()
				lats = append(lats, now.Sub(ts))
				latMu.Unlock()
			}
			if subCtx.Err() == nil {
				dropped.add("closed without an error event")
			}
		}()
	}
	opened.Wait()
	if errs.n > 0 {
		closeSubs()
		readers.Wait()
		return r, fmt.Errorf("subscribers: %d failed, first: %s", errs.n, errs.first)
	}

	progress("realtime: %d changes/s for %s", realtimeRate, d)
	srvRate := readUsage(srv.pid())
	measuring.Store(true)
	tick := time.NewTicker(time.Second / realtimeRate)
	end := time.After(d)
	var changes sync.WaitGroup
	create := rows[slices.IndexFunc(rows, func(r row) bool { return r.name == "create" })]
loop:
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-end:
			break loop
		case <-tick.C:
			r.Changes++
			changes.Add(1)
			go func() {
				defer changes.Done()
				req, _ := create.request(srv.base, fx, n, n+2_000_000, len(fx.tokens))
				res, err := client.Do(req)
				if err != nil {
					errs.add(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					errs.add(fmt.Sprintf("change: status %d", res.StatusCode))
				}
			}()
		}
	}
	tick.Stop()
	changes.Wait()
	// Each change reaches the subscribers of its owner.
	r.PerUser = realtimeSubs / len(fx.tokens)
	r.Expected = r.Changes * r.PerUser
	deadline := time.Now().Add(10 * time.Second)
	for received.Load() < int64(r.Expected) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	measuring.Store(false)
	r.ServerRate = readUsage(srv.pid()).since(srvRate)
	r.Delivered = int(received.Load())
	r.RSSWith = srv.currentRSS()
	latMu.Lock()
	slices.Sort(lats)
	if len(lats) > 0 {
		r.P50, r.P99, r.Max = percentile(lats, 50), percentile(lats, 99), lats[len(lats)-1]
	}
	latMu.Unlock()

	progress("realtime: POST /v1/items for %s with the subscribers connected", d)
	var profDone <-chan error
	if prof != nil {
		profDone = prof.cpu(ctx, "server", "realtime", d)
	}
	srv0, load0 = readUsage(srv.pid()), readUsage("self")
	counting.Store(true)
	with := createRate(ctx, client, srv.base, fx, o.conns, d, &errs)
	r.Create, r.Creates, r.CreateP50, r.CreateP99 = with.rate, with.n, with.p50, with.p99
	r.ServerWith, r.LoadWith = readUsage(srv.pid()).since(srv0), readUsage("self").since(load0)
	counting.Store(false)
	r.DeliveredWith = frames.Load()
	if profDone != nil {
		if err := <-profDone; err != nil {
			return r, err
		}
		if err := prof.heap(ctx, "realtime"); err != nil { // the streams still open
			return r, err
		}
	}
	// The events of the last creates, and of any the streams fell behind
	// on, are timed too: those that come late are the point.
	r.BusyDue = int(with.n) * r.PerUser
	deadline = time.Now().Add(10 * time.Second)
	for stamped.Load() < int64(r.BusyDue) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	closeSubs()
	readers.Wait()
	all := slices.Concat(busy...)
	slices.Sort(all)
	if r.BusyTimed = len(all); r.BusyTimed > 0 {
		r.BusyP50, r.BusyP99, r.BusyMax = percentile(all, 50), percentile(all, 99), all[len(all)-1]
	}
	r.RSSPeak = peak()
	r.RSSAfter = srv.settledRSS()
	r.Dropped, r.Why = dropped.counts()
	r.Errors, r.FirstError = errs.n, errs.first
	if r.Delivered == 0 {
		return r, errors.New("no event reached a subscriber")
	}
	return r, nil
}

// eventTimestamp finds an event's timestamp in its JSON without decoding the
// rest: the load generator reads 20,000 events a second on one CPU, and
// what it spends on each shows up as latency.
func eventTimestamp(data []byte) (time.Time, bool) {
	const key = `"timestamp":"`
	i := bytes.LastIndex(data, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return t, err == nil
}
