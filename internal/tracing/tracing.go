// Package tracing is the server's OpenTelemetry tracing (DESIGN §9),
// configured only by the standard OTEL_* variables and off unless they ask
// for it. Off is nil: the callers install nothing (no exporter, no
// goroutine, no middleware, no wrapped driver), so a server without tracing
// runs exactly the code it ran before tracing existed.
//
// On, it hands out the maintained instrumentation, each bound to one tracer
// provider and one propagator: otelgin for the HTTP server (both APIs),
// otelsql under the database pool, otelhttp for the webhook client, and a
// log handler that stamps trace_id and span_id on the lines of a traced
// request. Metrics stay Prometheus: every instrumentation gets the no-op
// meter provider.
package tracing

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/XSAM/otelsql"
	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme/itemsvc/internal/logging"
)

// ScopeName names the tracer of the spans this server makes itself (GraphQL
// operations, webhook deliveries); the instrumentation libraries use their
// own.
const ScopeName = "github.com/acme/itemsvc"

// ServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "itemsvc"

// Tracing is tracing switched on. A nil *Tracing is tracing off; its
// methods are not to be called then, and callers install nothing.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
	// sampling is false when the sampler can sample no span at all
	// (always_off, a ratio of 0): per-statement SQL spans are then not
	// worth their wrapper and are not installed.
	sampling bool
}

// Options build a Tracing by hand (tests, the benchmark); FromEnv builds
// the production one.
type Options struct {
	// Processor receives the spans (a batcher around an exporter, or a
	// tracetest recorder).
	Processor sdktrace.SpanProcessor
	// Sampler decides which traces are recorded; nil samples every one
	// that has no parent and follows the parent's decision otherwise.
	Sampler sdktrace.Sampler
	// Never says that Sampler can never sample (FromEnv knows it from
	// the variables; a hand-made sampler must say so).
	Never bool
	// Resource describes this process; nil: service.name itemsvc.
	Resource *resource.Resource
	// Propagator reads and writes trace context on the wire; nil: W3C
	// tracecontext and baggage.
	Propagator propagation.TextMapPropagator
}

// New switches tracing on with opts.
func New(opts Options) *Tracing {
	if opts.Sampler == nil {
		opts.Sampler = sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	if opts.Propagator == nil {
		opts.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	popts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(opts.Sampler)}
	if opts.Processor != nil {
		popts = append(popts, sdktrace.WithSpanProcessor(opts.Processor))
	}
	if opts.Resource == nil {
		opts.Resource = resource.NewSchemaless(attribute.String("service.name", ServiceName))
	}
	popts = append(popts, sdktrace.WithResource(opts.Resource))
	return &Tracing{
		provider:   sdktrace.NewTracerProvider(popts...),
		propagator: opts.Propagator,
		sampling:   !opts.Never,
	}
}

// TracerProvider is the provider every instrumentation uses.
func (t *Tracing) TracerProvider() trace.TracerProvider { return t.provider }

// Tracer is the tracer of the spans this server makes itself.
func (t *Tracing) Tracer() trace.Tracer { return t.provider.Tracer(ScopeName) }

// Propagator reads incoming and writes outgoing trace context.
func (t *Tracing) Propagator() propagation.TextMapPropagator { return t.propagator }

// Sampling reports whether any span can be sampled at all.
func (t *Tracing) Sampling() bool { return t.sampling }

// Shutdown flushes the spans still queued to the exporter and stops it; ctx
// bounds how long that may take.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Middleware traces every request through the router: a server span named
// by the method and the route template (never the path, which holds ids),
// continuing the trace of an incoming traceparent. It must run before the
// access log, so that the log line is written inside the span.
//
// When no span can be sampled it only carries an incoming trace context
// into the request (its log lines and the webhooks it causes keep the
// caller's trace): otelgin computes a span's attributes before the sampler
// decides, so with it every request would pay for a span that is dropped.
func (t *Tracing) Middleware() gin.HandlerFunc {
	if !t.sampling {
		return t.propagate
	}
	return otelgin.Middleware(ServiceName,
		otelgin.WithTracerProvider(t.provider),
		otelgin.WithPropagators(t.propagator),
		otelgin.WithMeterProvider(metricnoop.NewMeterProvider()),
	)
}

// propagate puts the trace context of the request's headers, if any, in its
// context.
func (t *Tracing) propagate(c *gin.Context) {
	ctx := c.Request.Context()
	if remote := t.propagator.Extract(ctx, propagation.HeaderCarrier(c.Request.Header)); remote != ctx {
		c.Request = c.Request.WithContext(remote)
	}
	c.Next()
}

// Transport wraps an HTTP client's transport: each request is a client span
// and carries traceparent to its receiver. The span's url.full holds the URL
// with its credentials redacted (redactURL).
func (t *Tracing) Transport(base http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(redactURL{base},
		otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
	)
}

// redactURL runs under otelhttp's span, which records url.full without the
// URL's user and password but with its query whole: a webhook URL's
// ?token=… would reach every reader of the traces. It sets url.full again,
// before the request is sent, to logging.RedactURL's form (each query value
// REDACTED, as the semantic conventions advise for url.full); the request
// itself goes out as it was.
type redactURL struct{ next http.RoundTripper }

func (r redactURL) RoundTrip(req *http.Request) (*http.Response, error) {
	if span := trace.SpanFromContext(req.Context()); span.IsRecording() {
		span.SetAttributes(attribute.String("url.full", logging.RedactURL(req.URL.String())))
	}
	return r.next.RoundTrip(req)
}

// SQLOpener opens the database pool with every statement of a recorded span
// traced, or is nil when no span can be sampled (then the pool is opened as
// without tracing).
// Spans are named by the statement's kind and table; they carry neither
// the statement's text nor its arguments.
func (t *Tracing) SQLOpener(system string) func(driverName, dsn string) (*sql.DB, error) {
	if !t.sampling {
		return nil
	}
	opts := []otelsql.Option{
		otelsql.WithTracerProvider(t.provider),
		otelsql.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelsql.WithAttributes(attribute.String("db.system.name", system)),
		otelsql.WithSpanNameFormatter(spanName),
		otelsql.WithAttributesGetter(statementAttributes),
		otelsql.WithSpanOptions(otelsql.SpanOptions{
			DisableQuery:         true, // the text is replaced by kind and table
			DisableErrSkip:       true, // driver.ErrSkip is no failure
			OmitConnResetSession: true,
			OmitConnPrepare:      true,
			OmitRows:             true,
			OmitConnectorConnect: true,
			RecordError:          func(err error) bool { return !errors.Is(err, context.Canceled) },
			// Only statements of a recorded span (a request, a delivery):
			// the background workers' polls would each be a trace of one
			// statement every second.
			SpanFilter: func(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
				return trace.SpanFromContext(ctx).IsRecording()
			},
		}),
	}
	return func(driverName, dsn string) (*sql.DB, error) {
		return otelsql.Open(driverName, dsn, opts...)
	}
}

// Traced reports whether db was opened by an opener of this package (its
// driver is the tracing wrapper), for the test that tracing off leaves the
// pool alone.
func Traced(db *sql.DB) bool {
	return fmt.Sprintf("%T", db.Driver()) == "*otelsql.otDriver"
}

// Install makes t the process's global tracer provider and propagator, for
// libraries that look there, and sends the SDK's own errors (an exporter
// that cannot reach its collector) to log as warnings. main calls it once,
// and only when tracing is on: off, the globals stay OpenTelemetry's no-ops.
func Install(t *Tracing, log *slog.Logger) {
	otel.SetTracerProvider(t.provider)
	otel.SetTextMapPropagator(t.propagator)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing", "err", err)
	}))
}
