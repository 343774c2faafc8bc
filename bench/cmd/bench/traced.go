package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// The traced rows (issue 35): the list and the create again, on servers
// with OpenTelemetry on, each in turns with the untraced server on the same
// row, so that their ratio is what tracing costs on this build:
//
//	traced:    every request sampled, spans batched to a local OTLP/HTTP
//	           receiver (this process), which reads and discards them;
//	unsampled: the SDK on, its sampler always_off (no span recorded, the
//	           SQL instrumentation not installed; trace context still read).
//
// The untraced rows themselves are what "tracing off" costs: nothing.
const (
	traceSampled   = "sampled"
	traceUnsampled = "unsampled"
)

func init() { rows = withTracedRows(rows) }

// withTracedRows adds after the list and the create rows their traced and
// unsampled twins.
func withTracedRows(rs []row) []row {
	var out []row
	for _, r := range rs {
		out = append(out, r)
		if r.name != "list" && r.name != "create" {
			continue
		}
		for _, m := range []struct{ mode, suffix, title string }{
			{traceSampled, "traced", ", traced: every request to a local OTLP receiver"},
			{traceUnsampled, "unsampled", ", the tracing SDK on, sampling none"},
		} {
			t := r
			t.name, t.title = r.name+"-"+m.suffix, r.title+m.title
			t.serverOnly, t.baseline, t.tracing = true, r.name, m.mode
			t.minRatio, t.maxP99 = 0, 0 // they inform
			out = append(out, t)
		}
	}
	return out
}

// tracingEnv is the environment that switches a server's tracing on in
// mode, exporting to the receiver at endpoint.
func tracingEnv(mode, endpoint string) []string {
	env := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=itemsvc-bench",
		"OTEL_TRACES_SAMPLER=always_on",
	}
	if mode == traceUnsampled {
		env[len(env)-1] = "OTEL_TRACES_SAMPLER=always_off"
	}
	return env
}

// otlpReceiver takes OTLP/HTTP trace exports and discards them, counting
// exports and bytes.
type otlpReceiver struct {
	srv     *http.Server
	url     string
	exports atomic.Int64
	bytes   atomic.Int64
}

func startOTLPReceiver() (*otlpReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &otlpReceiver{url: "http://" + ln.Addr().String()}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n, _ := io.Copy(io.Discard, req.Body)
		if req.URL.Path != "/v1/traces" {
			http.NotFound(w, req)
			return
		}
		r.exports.Add(1)
		r.bytes.Add(n)
		// An empty ExportTraceServiceResponse: everything accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go r.srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	return r, nil
}

func (r *otlpReceiver) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

func (r *otlpReceiver) String() string {
	return fmt.Sprintf("%d exports, %s MiB of spans", r.exports.Load(), mib(r.bytes.Load()))
}

// tracedServers are the servers of the traced rows, by mode.
type tracedServers map[string]*process

// startTracedServers starts a server per tracing mode the selected rows
// need, on the benchmark's database, and the receiver they export to; nil
// when no selected row is traced.
func startTracedServers(ctx context.Context, selected []row, cpu int, work string, env []string, bin string, foot *footprint) (tracedServers, *otlpReceiver, error) {
	modes := map[string]bool{}
	for _, r := range selected {
		if r.tracing != "" {
			modes[r.tracing] = true
		}
	}
	if len(modes) == 0 {
		return nil, nil, nil
	}
	rcv, err := startOTLPReceiver()
	if err != nil {
		return nil, nil, err
	}
	ts := tracedServers{}
	for _, mode := range []string{traceSampled, traceUnsampled} {
		if !modes[mode] {
			continue
		}
		p, err := startProcess(ctx, "server-"+mode, cpu, work, append(append([]string{}, env...), tracingEnv(mode, rcv.url)...), bin, "serve")
		if err != nil {
			ts.stop()
			rcv.stop()
			return nil, nil, err
		}
		ts[mode] = p
		idle, err := p.rss()
		if err != nil {
			ts.stop()
			rcv.stop()
			return nil, nil, err
		}
		foot.TracedIdle = append(foot.TracedIdle, fmt.Sprintf("%s %s MiB", mode, mib(idle)))
	}
	return ts, rcv, nil
}

func (ts tracedServers) stop() {
	for _, p := range ts {
		p.stop()
	}
}
