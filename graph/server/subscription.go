package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
)

// Subscriptions run over graphql-ws (WebSocket) and Server-Sent Events. A
// stream ends with a last result carrying the error (extensions.code:
// SLOW_CONSUMER, TOKEN_EXPIRED, UNAUTHORIZED, UNAVAILABLE), then complete,
// the same on both transports.

// keepAlive is how often an idle subscription is pinged, by default
// (Options.KeepAlive).
const keepAlive = 15 * time.Second

// wsTransport is gqlgen's graphql-ws transport for complete upgrade
// requests only (one with an Upgrade header but no "Connection: Upgrade" is
// left to the unsupported transport's coded refusal), each connection
// guarded by a socket (socket.go): the protocol's close codes and an
// authorization check per operation.
type wsTransport struct {
	transport.Websocket
	svc         *service.Service
	initTimeout time.Duration
}

// Supports implements graphql.Transport.
func (t wsTransport) Supports(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") && t.Websocket.Supports(r)
}

// Do implements graphql.Transport.
func (t wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s := &socket{ctx: context.WithoutCancel(r.Context()), svc: t.svc}
	// A socket signed in by its upgrade's Authorization header is checked
	// at every operation as one signed in by connection_init is (whose
	// token, if it sends one, replaces this one).
	if v, ok := viewer.FromContext(r.Context()); ok {
		if a := accountFrom(r.Context()); a != nil && a.token != "" {
			s.setToken(a.token, v)
		}
	}
	ws := t.Websocket
	ws.Implementation = guardedImplementation{WebsocketImplementation: ws.Implementation, s: s, initTimeout: t.initTimeout}
	ws.Do(w, r.WithContext(context.WithValue(r.Context(), socketKey{}, s)), exec)
}

// websocketTransport is gqlgen's graphql-ws transport, authenticating the
// connection from connection_init's payload ({"Authorization": "Bearer …"})
// and, by socket, again before each operation. A connection_init refused
// closes the connection 4403; one that does not come within initTimeout
// (0: defaultInitTimeout), 4408.
func websocketTransport(svc *service.Service, origins []string, initTimeout, keepAlive time.Duration) wsTransport {
	if initTimeout <= 0 {
		initTimeout = defaultInitTimeout
	}
	return wsTransport{svc: svc, initTimeout: initTimeout, Websocket: transport.Websocket{
		Implementation: transport.CoderWebsocketImplementation{
			AcceptOptions: websocket.AcceptOptions{OriginPatterns: origins},
		},
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h := p.Authorization()
			if h == "" {
				return ctx, nil, nil // anonymous: only login and introspection
			}
			refused := transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, "Forbidden"), closeForbidden)
			token, ok := httpapi.Bearer(h)
			if !ok {
				return refused, nil, apperr.Unauthorized("connection_init's Authorization must be Bearer <token>")
			}
			v, err := svc.Authenticate(ctx, token)
			if err != nil {
				return refused, nil, err
			}
			if a := accountFrom(ctx); a != nil {
				a.limiter, a.id, a.own, a.anonymous = a.keys, v.KeyID, v.Limits, false
			}
			if s := socketFrom(ctx); s != nil {
				s.setToken(token, v)
			}
			return withToken(viewer.NewContext(ctx, v), token), nil, nil
		},
		// graphql-ws (legacy) keep-alives; graphql-transport-ws pings,
		// which a client answers but need not (idle proxies see traffic).
		KeepAlivePingInterval: keepAlive,
		PingPongInterval:      keepAlive,
		MissingPongOk:         true,
	}}
}

type tokenKey struct{}

// withToken keeps the token a stream was opened with, to check it again
// (graphql-ws: the token of connection_init).
func withToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// tokenFrom is the token a stream was opened with: connection_init's, or
// the bearer token of the request (SSE), which billing keeps in the
// request's account rather than in a context of its own.
func tokenFrom(ctx context.Context) string {
	if t, ok := ctx.Value(tokenKey{}).(string); ok {
		return t
	}
	if a := accountFrom(ctx); a != nil {
		return a.token
	}
	return ""
}

// streamDeadlines lifts the server's read and write timeouts from a request
// that opens a stream, by the rule of the request deadline (rest's
// streaming): a WebSocket upgrade over GET, or SSE over POST (gqlgen's SSE
// transport takes only POST; a GET asking for SSE is a plain query).
func streamDeadlines(c *gin.Context) {
	h, m := c.Request.Header, c.Request.Method
	if m == http.MethodGet && strings.EqualFold(h.Get("Upgrade"), "websocket") ||
		m == http.MethodPost && strings.Contains(h.Get("Accept"), "text/event-stream") {
		rc := http.NewResponseController(c.Writer)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
	}
}

// endWithError is an operation middleware: it gives a subscription its
// graph.Stream, with the token the stream was opened with, and the stream
// ends with a last response carrying the error its resolver left, presented
// with its code and the subscription's field as its path, before the
// transport completes it. On a WebSocket, a stream ended by its token
// (UNAUTHORIZED, TOKEN_EXPIRED) then closes the connection 4403, as a
// refused operation does (socket.go).
func endWithError(p presenter) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		opCtx := graphql.GetOperationContext(ctx)
		op := opCtx.Operation
		if op == nil || op.Operation != ast.Subscription {
			return next(ctx)
		}
		// Each event is rendered under the context of the response gqlgen
		// asks for, which lacks the subscription's field: the errors of
		// its fields would have paths without it (["item", "owner"]).
		// Under root, they start at the subscription's field.
		var path ast.Path
		root := &graphql.FieldContext{Object: "Subscription"}
		if fields := graphql.CollectFields(opCtx, op.SelectionSet, []string{"Subscription"}); len(fields) > 0 {
			root.Field = fields[0]
			path = ast.Path{ast.PathName(fields[0].Alias)}
		}
		stream := &graph.Stream{Token: tokenFrom(ctx)}
		responses := next(graph.WithStream(ctx, stream))
		// sent: the last response, with the error, was handed to the
		// transport, which asks for responses one at a time.
		sent := false
		return func(ctx context.Context) *graphql.Response {
			if r := responses(graphql.WithFieldContext(ctx, root)); r != nil {
				return r
			}
			err := stream.Err()
			if err == nil {
				return nil
			}
			if sent {
				// The transport wrote the error: the connection may go.
				if s := socketFrom(ctx); s != nil && endsAuthorization(err) {
					s.forbid()
				}
				return nil
			}
			sent = true
			e := p.present(ctx, err)
			if e.Path == nil {
				e.Path = path
			}
			return &graphql.Response{Data: json.RawMessage("null"), Errors: gqlerror.List{e}}
		}
	}
}

// endsAuthorization tells whether err is a token that no longer holds.
func endsAuthorization(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && (e.Code == apperr.CodeUnauthorized || e.Code == apperr.CodeTokenExpired)
}
