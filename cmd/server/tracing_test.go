package main

import (
	"context"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/acme/itemsvc/internal/testutil"
)

// otlpCollector is an OTLP receiver, over HTTP (ServeHTTP) and gRPC
// (Export): it decodes every export and keeps the spans.
type otlpCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string
}

// Export implements OTLP's gRPC TraceService.
func (c *otlpCollector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.keep(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP trace export", http.StatusBadRequest)
		return
	}
	c.keep(&req)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *otlpCollector) keep(req *collectortrace.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				c.service = append(c.service, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
}

// named returns the spans of that name in trace (any trace when empty).
func (c *otlpCollector) named(name, trace string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.Name == name && (trace == "" || hex.EncodeToString(s.TraceId) == trace) {
			out = append(out, s)
		}
	}
	return out
}

// TestTracesOverOTLP runs the binary's serve with tracing switched on by
// the OTEL_* variables alone, exporting over OTLP/HTTP, and then over
// OTLP/gRPC, each in plain text and over TLS to a collector whose
// certificate OTEL_EXPORTER_OTLP_CERTIFICATE names, to a receiver in the
// test that decodes with OTLP's generated types. A create carrying a traceparent, and the webhook delivery it
// causes, reach the receiver when the server stops (the batcher is set to
// wait longer than the test: only the shutdown's flush sends them): the
// request's span continuing the caller's trace, its SQL spans, the
// delivery's span linked to it with its HTTP client span, whose
// traceparent the webhook receiver got; the request's log lines carry the
// trace id.
func TestTracesOverOTLP(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		tls            bool
	}{
		{"http/protobuf", "http/protobuf", false},
		{"grpc", "grpc", false},
		{"http/protobuf over TLS", "http/protobuf", true},
		{"grpc over TLS", "grpc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := &otlpCollector{}
			// The TLS collectors present httptest's certificate, which
			// OTEL_EXPORTER_OTLP_CERTIFICATE makes the server trust.
			tlsSrv := httptest.NewUnstartedServer(col)
			var endpoint string
			if tc.tls {
				tlsSrv.StartTLS()
				defer tlsSrv.Close()
				ca := filepath.Join(t.TempDir(), "ca.pem")
				if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
				endpoint = tlsSrv.URL // https://127.0.0.1:…
			}
			if tc.protocol == "grpc" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				var opts []grpc.ServerOption
				if tc.tls {
					opts = append(opts, grpc.Creds(credentials.NewServerTLSFromCert(&tlsSrv.TLS.Certificates[0])))
				}
				srv := grpc.NewServer(opts...)
				collectortrace.RegisterTraceServiceServer(srv, col)
				go srv.Serve(ln) //nolint:errcheck // ends with Stop
				defer srv.Stop()
				endpoint = "http://" + ln.Addr().String() // http: no TLS
				if tc.tls {
					endpoint = "https://" + ln.Addr().String()
				}
			} else if !tc.tls {
				collector := httptest.NewServer(col)
				defer collector.Close()
				endpoint = collector.URL
			}
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			traceOneCreate(t, col, endpoint)
		})
	}
}

// traceOneCreate is TestTracesOverOTLP's run against a collector at
// endpoint.
func traceOneCreate(t *testing.T, col *otlpCollector, endpoint string) {
	hooks := make(chan string, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks <- r.Header.Get("traceparent")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "itemsvc-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	// Each transaction commits alone: under group commit a batch's BEGIN and
	// COMMIT are spans of the trace of the request that opened it, and the
	// background writes (the key's last use, the dispatcher) may open it
	// (docs/configuration.md, "SQLite").
	s := startServe(t, []string{"-database-url", testutil.DatabaseURL(t), "-webhook-allow-private", "true", "-database-batch-window", "0"}, nil)
	key := firstKey.FindString(s.stderr.String())
	c := login(t, "http://"+s.addr, key)
	if status, env := c.do(t, "POST", "/v1/webhooks", map[string]string{"url": receiver.URL}); status != http.StatusCreated {
		t.Fatalf("create webhook: %d %v", status, env)
	}

	const trace, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/items", strings.NewReader(`{"name":"traced"}`))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+trace+"-"+parent+"-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", res.StatusCode)
	}
	var got string
	select {
	case got = <-hooks:
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook receiver got no delivery")
	}
	if n := len(col.named("POST /v1/items", "")); n != 0 {
		t.Fatalf("%d spans exported before the shutdown; the batcher should still hold them", n)
	}

	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	s.done <- nil

	server := col.named("POST /v1/items", trace)
	if len(server) != 1 || hex.EncodeToString(server[0].ParentSpanId) != parent || server[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("request spans in trace %s: %v; want one server span under %s", trace, server, parent)
	}
	for _, name := range []string{"INSERT items", "INSERT events", "COMMIT"} {
		if len(col.named(name, trace)) == 0 {
			t.Errorf("no %q span in the request's trace", name)
		}
	}
	deliveries := col.named("webhook delivery", "")
	if len(deliveries) != 1 || len(deliveries[0].Links) != 1 || hex.EncodeToString(deliveries[0].Links[0].TraceId) != trace {
		t.Fatalf("delivery spans %v: want one, linked to trace %s", deliveries, trace)
	}
	client := col.named("HTTP POST", hex.EncodeToString(deliveries[0].TraceId))
	if len(client) != 1 || client[0].Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("webhook request spans %v: want one client span in the delivery's trace", client)
	}
	if want := "00-" + hex.EncodeToString(client[0].TraceId) + "-" + hex.EncodeToString(client[0].SpanId) + "-01"; got != want {
		t.Errorf("the webhook receiver got traceparent %q, want %q", got, want)
	}
	if len(col.service) == 0 || col.service[0] != "itemsvc-test" {
		t.Errorf("service.name %v, want OTEL_SERVICE_NAME's itemsvc-test", col.service)
	}
	span := hex.EncodeToString(server[0].SpanId)
	logged := false
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(line, `"route":"/v1/items"`) && strings.Contains(line, `"method":"POST"`) {
			logged = true
			if !strings.Contains(line, `"trace_id":"`+trace+`"`) || !strings.Contains(line, `"span_id":"`+span+`"`) {
				t.Errorf("the create's log line lacks trace_id %s and span_id %s: %s", trace, span, line)
			}
		}
	}
	if !logged {
		t.Errorf("no log line of the create:\n%s", s.stderr)
	}
}
