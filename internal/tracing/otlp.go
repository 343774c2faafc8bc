package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter sends spans to an OTLP collector over HTTP (protobuf) or
// gRPC, configured by the OTEL_EXPORTER_OTLP_* variables as the
// OpenTelemetry SDKs' exporters are (otlpConfigFrom). It replaces
// otlptracehttp and otlptracegrpc, which link gRPC, grpc-gateway and the
// protobuf runtime with OTLP's generated types, whose package
// initialisation every start paid in resident memory, tracing on or off
// (docs/development.md, "Idle footprint"). gRPC is spoken through
// net/http's HTTP/2: one unary call, TraceService/Export.
type otlpExporter struct {
	cfg    otlpConfig
	client *http.Client
}

// otlpConfig is an exporter's settings.
type otlpConfig struct {
	grpc     bool
	url      string // the export's URL: /v1/traces, or gRPC's method path
	headers  http.Header
	timeout  time.Duration
	gzip     bool
	tls      *tls.Config // nil: plain text
	insecure bool
}

// grpcExportPath is the gRPC method of OTLP's trace export.
const grpcExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

func newOTLPExporter(cfg otlpConfig) *otlpExporter {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     cfg.tls,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	if cfg.grpc {
		// gRPC is HTTP/2 only: over TLS negotiated, in plain text with
		// prior knowledge (h2c), as gRPC clients do, and then not through
		// an HTTP proxy, which would not forward it.
		tr.Protocols = new(http.Protocols)
		if cfg.insecure {
			tr.Protocols.SetUnencryptedHTTP2(true)
			tr.Proxy = nil
		} else {
			tr.Protocols.SetHTTP2(true)
		}
	}
	return &otlpExporter{cfg: cfg, client: &http.Client{Transport: tr}}
}

// ExportSpans sends spans in one request, retrying what the collector says
// may be retried (throttled, unavailable) until the export's timeout.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.timeout)
	defer cancel()
	body, err := e.body(encodeSpans(spans))
	if err != nil {
		return err
	}
	for wait := 500 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		retry, after, err := e.send(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after > 0 {
			wait = after
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// body is the request's body: the message, gzipped if asked, and over
// gRPC in its length-prefixed frame.
func (e *otlpExporter) body(msg []byte) ([]byte, error) {
	if e.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(msg); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		msg = buf.Bytes()
	}
	if !e.cfg.grpc {
		return msg, nil
	}
	frame := make([]byte, 5, 5+len(msg))
	if e.cfg.gzip {
		frame[0] = 1 // compressed
	}
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	return append(frame, msg...), nil
}

// send makes one attempt, and says whether a failure may be retried and
// after how long the collector asked (0: not said).
func (e *otlpExporter) send(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, vs := range e.cfg.headers {
		req.Header[k] = vs
	}
	if e.cfg.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if e.cfg.gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if e.cfg.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	res, err := e.client.Do(req)
	if err != nil {
		return true, 0, fmt.Errorf("OTLP export: %w", err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if e.cfg.grpc {
		return grpcOutcome(res)
	}
	switch {
	case res.StatusCode/100 == 2:
		return false, 0, nil
	case res.StatusCode == http.StatusTooManyRequests, res.StatusCode == http.StatusBadGateway,
		res.StatusCode == http.StatusServiceUnavailable, res.StatusCode == http.StatusGatewayTimeout:
		return true, retryAfter(res.Header.Get("Retry-After")), fmt.Errorf("OTLP export: %s", res.Status)
	default:
		return false, 0, fmt.Errorf("OTLP export: %s: %s", res.Status, bytes.TrimSpace(text))
	}
}

// grpcOutcome reads a gRPC call's status from its trailers (or from its
// headers, when the server answered with trailers only). The codes gRPC's
// OTLP exporters retry are retried.
func grpcOutcome(res *http.Response) (bool, time.Duration, error) {
	if res.StatusCode != http.StatusOK {
		return res.StatusCode == http.StatusServiceUnavailable || res.StatusCode == http.StatusTooManyRequests,
			0, fmt.Errorf("OTLP export over gRPC: HTTP %s", res.Status)
	}
	status, msg := res.Trailer.Get("Grpc-Status"), res.Trailer.Get("Grpc-Message")
	if status == "" {
		status, msg = res.Header.Get("Grpc-Status"), res.Header.Get("Grpc-Message")
	}
	code, err := strconv.Atoi(status)
	switch {
	case err != nil:
		return false, 0, fmt.Errorf("OTLP export over gRPC: no status in the answer")
	case code == 0:
		return false, 0, nil
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	// Cancelled, deadline exceeded, aborted, out of range, unavailable,
	// data loss.
	retry := code == 1 || code == 4 || code == 10 || code == 11 || code == 14 || code == 15
	return retry, 0, fmt.Errorf("OTLP export over gRPC: status %d: %s", code, msg)
}

// retryAfter reads a Retry-After header in seconds (0: absent or a date).
func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// Shutdown closes the exporter's idle connections; the batcher has sent
// what it held before it calls it.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// otlpConfigFrom reads the OTEL_EXPORTER_OTLP_* variables for traces (a
// TRACES_ variable before its general one), as the specification says
// (opentelemetry.io/docs/specs/otel/protocol/exporter): a value this
// server cannot use is an error naming its variable.
func otlpConfigFrom(grpcProtocol bool, get func(string) string) (otlpConfig, error) {
	pick := func(name string) (string, string) {
		if v := get("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
			return v, "OTEL_EXPORTER_OTLP_TRACES_" + name
		}
		return get("OTEL_EXPORTER_OTLP_" + name), "OTEL_EXPORTER_OTLP_" + name
	}
	cfg := otlpConfig{grpc: grpcProtocol, headers: http.Header{}, timeout: 10 * time.Second}
	var errs []error
	fail := func(variable, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{variable}, a...)...))
	}

	if v, name := pick("INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail(name, "want true or false, got %q", v)
		}
		cfg.insecure = b
	}
	endpoint, name := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	signal := endpoint != ""
	if !signal {
		endpoint, name = get("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	switch {
	case endpoint == "" && grpcProtocol:
		endpoint = "localhost:4317"
	case endpoint == "":
		endpoint, signal = "http://localhost:4318/v1/traces", true
	}
	if !strings.Contains(endpoint, "://") {
		// host:port, as gRPC endpoints are often given: TLS unless
		// INSECURE says otherwise.
		scheme := "https://"
		if cfg.insecure {
			scheme = "http://"
		}
		endpoint = scheme + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fail(name, "want a URL such as http://collector:4318, got %q", endpoint)
		u = &url.URL{}
	}
	cfg.insecure = u.Scheme == "http"
	switch {
	case grpcProtocol:
		u.Path, u.RawPath = grpcExportPath, ""
	case !signal:
		u.Path, u.RawPath = strings.TrimSuffix(u.Path, "/")+"/v1/traces", ""
	}
	cfg.url = u.String()

	if v, name := pick("HEADERS"); v != "" {
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			dec, err := url.PathUnescape(strings.TrimSpace(val))
			if !ok || k == "" || err != nil {
				fail(name, "want key=value,… (values URL-encoded), got %q", pair)
				continue
			}
			cfg.headers.Add(k, dec)
		}
	}
	if v, name := pick("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			fail(name, "want milliseconds, a positive integer, got %q", v)
		} else {
			cfg.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if v, name := pick("COMPRESSION"); v != "" {
		switch v {
		case "gzip":
			cfg.gzip = true
		case "none":
		default:
			fail(name, "want gzip or none, got %q", v)
		}
	}
	if !cfg.insecure {
		cfg.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if v, name := pick("CERTIFICATE"); v != "" {
			pem, err := os.ReadFile(v)
			pool := x509.NewCertPool()
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				fail(name, "want a file of PEM certificates, got %q (%v)", v, err)
			}
			cfg.tls.RootCAs = pool
		}
		certFile, certName := pick("CLIENT_CERTIFICATE")
		keyFile, keyName := pick("CLIENT_KEY")
		switch {
		case certFile != "" && keyFile != "":
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				fail(certName, "with %s: %v", keyName, err)
			}
			cfg.tls.Certificates = []tls.Certificate{cert}
		case certFile != "" || keyFile != "":
			fail(certName, "and %s go together", keyName)
		}
	}
	return cfg, errors.Join(errs...)
}
