// Package server is the GraphQL server at /graphql over package graph's
// schema and resolvers: its transports (GET, POST, Server-Sent Events,
// graphql-ws), the bounds every operation is held to before it runs (size,
// depth, cost, page sizes, variables, deadline), the charge to the rate
// limit, the error presenter, and the routes it mounts beside REST's.
package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/graph/serial"
	"github.com/acme/itemsvc/internal/service"
)

// Options bound the GraphQL server; zero values take the defaults of
// GRAPHQL_MAX_DEPTH and GRAPHQL_MAX_COMPLEXITY.
type Options struct {
	MaxDepth      int
	MaxComplexity int
	// AnonymousIntrospection lets requests without a token read the
	// schema; it follows PLAYGROUND, whose page loads the schema before
	// anyone has logged in.
	AnonymousIntrospection bool
	Logger                 *slog.Logger
	// WebSocketOrigins are the host patterns of the pages that may open a
	// WebSocket from a browser (CORS_ORIGINS' hosts); the server's own host
	// is always allowed.
	WebSocketOrigins []string
	// WebSocketInitTimeout is how long a WebSocket may stay open without
	// connection_init before it is closed 4408; 0: 10s. Tests shorten it.
	WebSocketInitTimeout time.Duration
	// KeepAlive is how often an idle event stream or socket is pinged; 0:
	// 15s. Tests shorten it.
	KeepAlive time.Duration
	// RequestTimeout bounds every query and mutation, whatever its
	// transport (REQUEST_TIMEOUT; deadline.go); zero bounds none.
	RequestTimeout time.Duration
	// Extensions are gqlgen handler extensions used after the server's own
	// (a tracer, entgql.Transactioner). A field middleware among them
	// needs gqlgen's own executor: on the rewritten one New panics
	// (guardedServer).
	Extensions []graphql.HandlerExtension
	// Tracer, when set, makes a span of every operation (tracing.go);
	// nil: tracing is off and nothing of it is installed.
	Tracer trace.Tracer
}

// queryCacheSize is how many parsed documents are kept: clients send the
// same few operations over and over.
const queryCacheSize = 1000

// New returns the /graphql handler: queries over GET, any operation
// over POST, subscriptions over graphql-ws (WebSocket) and Server-Sent
// Events (subscription.go; no multipart: there are no uploads;
// transport.go), bounded in size, depth and cost (limits.go), with
// introspection, every error presented with the REST codes (a refused input
// value naming its field: inputerrors.go) and every panic recovered as
// INTERNAL_ERROR. It panics if a field middleware is registered on the
// rewritten executor, which would not call it (guardedServer).
func New(svc *service.Service, opts Options) http.Handler {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 10
	}
	if opts.MaxComplexity <= 0 {
		opts.MaxComplexity = 1000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = keepAlive
	}
	es := generated.NewExecutableSchema(generated.Config{Resolvers: graph.NewResolver(svc)})
	srv := guardedServer{Server: handler.New(es), fastPaths: fastPaths(es)}
	srv.AddTransport(getTransport{pooled: srv.fastPaths})
	srv.AddTransport(sseTransport{transport.SSE{KeepAlivePingInterval: opts.KeepAlive}}) // before POST, which would take its requests
	srv.AddTransport(postTransport{pooled: srv.fastPaths})
	srv.AddTransport(websocketTransport(svc, opts.WebSocketOrigins, opts.WebSocketInitTimeout, opts.KeepAlive))
	srv.AddTransport(unsupported{}) // last: it takes whatever the others do not
	srv.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
	srv.SetParserTokenLimit(parserTokenLimit)
	srv.SetValidationRulesFn(operationRules)
	if opts.Tracer != nil {
		srv.Use(operationSpans{tracer: opts.Tracer}) // first: around every other response interceptor
	}
	srv.AroundResponses(recordOutcome) // the executed response, before a transport frames it
	srv.Use(variableDepth{})           // before gqlgen coerces the variables
	srv.Use(queriesOverGET{})
	srv.Use(pageDefaults{schema: es.Schema(), memo: new(opMemo[defaulted])}) // before what keys on the operation
	srv.Use(serial.FieldsCache{})                                            // for serial.CollectFields
	srv.Use(extension.Introspection{})
	srv.Use(depthLimit{max: opts.MaxDepth})
	srv.Use(costLimit{schema: es.Schema(), max: opts.MaxComplexity, anonymousIntrospection: opts.AnonymousIntrospection,
		prices: new(opMemo[*cost])})
	srv.Use(writeScope{}) // after the charge, as REST refuses a write after its rate limit
	srv.Use(replayed{})   // after every check, which a replay passes as the first request did
	srv.AroundOperations(graph.WithCountsOnce)
	srv.AroundOperations(operationDeadline(opts.RequestTimeout))
	p := presenter{log: opts.Logger, schema: es.Schema()}
	srv.AroundOperations(socketViewer)
	srv.AroundOperations(endWithError(p))
	srv.SetErrorPresenter(p.present)
	srv.SetRecoverFunc(p.recover)
	for _, ext := range opts.Extensions {
		srv.Use(ext)
	}
	return srv
}
