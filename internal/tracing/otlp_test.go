package tracing

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// stubSpans are two spans of one resource and two scopes, carrying every
// kind of field and attribute value the encoder writes.
func stubSpans() []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", "itemsvc-test"))
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled, Remote: true})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled})
	start := time.Unix(1700000000, 123456789)
	long := strings.Repeat("x", 300) // a length of two bytes
	return tracetest.SpanStubs{
		{
			Name:        "POST /v1/items",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{8, 7, 6, 5, 4, 3, 2, 1}, TraceFlags: trace.FlagsSampled}),
			Parent:      parent,
			SpanKind:    trace.SpanKindServer,
			StartTime:   start,
			EndTime:     start.Add(1500 * time.Microsecond),
			Attributes: []attribute.KeyValue{
				attribute.String("http.route", "/v1/items"), attribute.String("long", long),
				attribute.Int64("http.response.status_code", 201), attribute.Int64("negative", -3),
				attribute.Bool("ok", true), attribute.Bool("no", false), attribute.Float64("ratio", 0.25),
				attribute.StringSlice("codes", []string{"A", "B"}), attribute.Int64Slice("ints", []int64{1, -2}),
				attribute.BoolSlice("bools", []bool{true, false}), attribute.Float64Slice("floats", []float64{1.5}),
			},
			Events:               []sdktrace.Event{{Name: "exception", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.String("exception.message", "boom")}}},
			Links:                []sdktrace.Link{{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "cause")}}},
			Status:               sdktrace.Status{Code: codes.Error, Description: "it failed"},
			DroppedAttributes:    2,
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "otelgin", Version: "0.71.0"},
		},
		{
			Name:                 "SELECT items",
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}),
			SpanKind:             trace.SpanKindClient,
			StartTime:            start,
			EndTime:              start.Add(time.Millisecond),
			Status:               sdktrace.Status{Code: codes.Ok},
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "otelsql"},
		},
	}.Snapshots()
}

// TestEncodeSpans: what encodeSpans writes is, read by OTLP's generated
// types, the spans it was given.
func TestEncodeSpans(t *testing.T) {
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeSpans(stubSpans()), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.ResourceSpans) != 1 {
		t.Fatalf("%d resources, want 1", len(req.ResourceSpans))
	}
	rs := req.ResourceSpans[0]
	if a := rs.Resource.GetAttributes(); len(a) != 1 || a[0].Key != "service.name" || a[0].Value.GetStringValue() != "itemsvc-test" {
		t.Errorf("resource %v", rs.Resource)
	}
	if len(rs.ScopeSpans) != 2 || rs.ScopeSpans[0].Scope.Name != "otelgin" || rs.ScopeSpans[0].Scope.Version != "0.71.0" || rs.ScopeSpans[1].Scope.Name != "otelsql" {
		t.Fatalf("scopes %v", rs.ScopeSpans)
	}
	s := rs.ScopeSpans[0].Spans[0]
	want := &tracepb.Span{
		TraceId:                mustHex("0af7651916cd43dd8448eb211c80319c"),
		SpanId:                 []byte{8, 7, 6, 5, 4, 3, 2, 1},
		ParentSpanId:           []byte{1, 2, 3, 4, 5, 6, 7, 8},
		Flags:                  0x301, // sampled, parent's remoteness known, remote
		Name:                   "POST /v1/items",
		Kind:                   tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano:      1700000000123456789,
		EndTimeUnixNano:        1700000000124956789,
		DroppedAttributesCount: 2,
		Status:                 &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "it failed"},
	}
	gotAttrs := s.Attributes
	if !proto.Equal(withoutLists(s), want) {
		t.Errorf("span\n%v\nwant\n%v", withoutLists(s), want)
	}
	attrs := map[string]*commonpb.AnyValue{}
	for _, kv := range gotAttrs {
		attrs[kv.Key] = kv.Value
	}
	checks := map[string]bool{
		"http.route":  attrs["http.route"].GetStringValue() == "/v1/items",
		"long":        len(attrs["long"].GetStringValue()) == 300,
		"status code": attrs["http.response.status_code"].GetIntValue() == 201,
		"negative":    attrs["negative"].GetIntValue() == -3,
		"true":        attrs["ok"].GetBoolValue(),
		"false":       attrs["no"] != nil && attrs["no"].Value != nil && !attrs["no"].GetBoolValue(),
		"float":       attrs["ratio"].GetDoubleValue() == 0.25,
		"strings":     len(attrs["codes"].GetArrayValue().GetValues()) == 2 && attrs["codes"].GetArrayValue().Values[1].GetStringValue() == "B",
		"ints":        len(attrs["ints"].GetArrayValue().GetValues()) == 2 && attrs["ints"].GetArrayValue().Values[1].GetIntValue() == -2,
		"bools":       len(attrs["bools"].GetArrayValue().GetValues()) == 2 && !attrs["bools"].GetArrayValue().Values[1].GetBoolValue(),
		"floats":      len(attrs["floats"].GetArrayValue().GetValues()) == 1 && attrs["floats"].GetArrayValue().Values[0].GetDoubleValue() == 1.5,
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("attribute %s wrong: %v", name, gotAttrs)
		}
	}
	if e := s.Events; len(e) != 1 || e[0].Name != "exception" || e[0].TimeUnixNano != 1700000000124456789 || e[0].Attributes[0].Value.GetStringValue() != "boom" {
		t.Errorf("events %v", e)
	}
	if l := s.Links; len(l) != 1 || l[0].TraceId[0] != 9 || l[0].SpanId[0] != 9 || l[0].Flags != 0x101 || l[0].Attributes[0].Key != "why" {
		t.Errorf("links %v", l)
	}
	sel := rs.ScopeSpans[1].Spans[0]
	if sel.Name != "SELECT items" || sel.Kind != tracepb.Span_SPAN_KIND_CLIENT || len(sel.ParentSpanId) != 0 || sel.Flags != 0x101 || sel.Status.GetCode() != tracepb.Status_STATUS_CODE_OK {
		t.Errorf("second span %v", sel)
	}
}

func withoutLists(s *tracepb.Span) *tracepb.Span {
	c := proto.Clone(s).(*tracepb.Span)
	c.Attributes, c.Events, c.Links = nil, nil, nil
	return c
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestOTLPConfig: the variables give the URL, headers, timeout,
// compression and transport security the specification says, and a value
// this server cannot use is an error naming its variable.
func TestOTLPConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		grpc     bool
		env      map[string]string
		url      string
		insecure bool
		err      string
	}{
		{name: "http default", url: "http://localhost:4318/v1/traces", insecure: true},
		{name: "http base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318/otlp/"}, url: "https://collector:4318/otlp/v1/traces"},
		{name: "http traces endpoint as is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2/custom"}, url: "http://b:2/custom", insecure: true},
		{name: "grpc default", grpc: true, url: "https://localhost:4317" + grpcExportPath},
		{name: "grpc host:port insecure", grpc: true, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, url: "http://collector:4317" + grpcExportPath, insecure: true},
		{name: "grpc http scheme", grpc: true, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, url: "http://collector:4317" + grpcExportPath, insecure: true},
		{name: "bad endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://x"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "bad insecure", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_INSECURE": "yes please"}, err: "OTEL_EXPORTER_OTLP_TRACES_INSECURE"},
		{name: "bad headers", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, err: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, err: "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"}, err: "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"},
		{name: "missing certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent.pem"}, err: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{name: "client certificate without key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/c.pem"}, err: "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := otlpConfigFrom(tc.grpc, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.url != tc.url || cfg.insecure != tc.insecure || (cfg.tls == nil) != tc.insecure {
				t.Errorf("url %q insecure %v tls %v; want %q insecure %v", cfg.url, cfg.insecure, cfg.tls != nil, tc.url, tc.insecure)
			}
		})
	}
	cfg, err := otlpConfigFrom(false, func(k string) string {
		return map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS":        "api-key=a%20b, x-tenant = t1",
			"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2500",
			"OTEL_EXPORTER_OTLP_COMPRESSION":    "gzip",
		}[k]
	})
	if err != nil || cfg.headers.Get("Api-Key") != "a b" || cfg.headers.Get("X-Tenant") != "t1" || cfg.timeout != 2500*time.Millisecond || !cfg.gzip {
		t.Errorf("headers %v timeout %s gzip %v err %v", cfg.headers, cfg.timeout, cfg.gzip, err)
	}
}

// TestOTLPExportRetries: an export over HTTP carries its headers and gzip
// body to /v1/traces, and is sent again after the collector answers 503.
func TestOTLPExportRetries(t *testing.T) {
	var calls atomic.Int32
	var got collectortrace.ExportTraceServiceRequest
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
			r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Api-Key") != "k" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
			var body []byte
			if body, err = io.ReadAll(zr); err == nil {
				err = proto.Unmarshal(body, &got)
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	defer col.Close()
	cfg, err := otlpConfigFrom(false, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	exp := newOTLPExporter(cfg)
	defer exp.Shutdown(context.Background())
	if err := exp.ExportSpans(context.Background(), stubSpans()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || len(got.ResourceSpans) != 1 || len(got.ResourceSpans[0].ScopeSpans) != 2 {
		t.Errorf("%d calls, received %v", calls.Load(), &got)
	}
}
