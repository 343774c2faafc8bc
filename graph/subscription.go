package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
	"github.com/acme/itemsvc/rest"
)

// Subscriptions run over graphql-ws (WebSocket) and Server-Sent Events. A
// stream ends with a last result carrying the error (extensions.code:
// SLOW_CONSUMER, TOKEN_EXPIRED, UNAUTHORIZED, UNAVAILABLE), then complete,
// the same on both transports.

// keepAlive is how often an idle subscription is pinged.
const keepAlive = 15 * time.Second

// wsTransport is gqlgen's graphql-ws transport for complete upgrade
// requests only: one with an Upgrade header but no "Connection: Upgrade" is
// left to the unsupported transport's coded refusal.
type wsTransport struct{ transport.Websocket }

// Supports implements graphql.Transport.
func (t wsTransport) Supports(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") && t.Websocket.Supports(r)
}

// websocketTransport is gqlgen's graphql-ws transport, authenticating the
// connection from connection_init's payload ({"Authorization": "Bearer …"}).
func websocketTransport(svc *service.Service, origins []string) wsTransport {
	return wsTransport{transport.Websocket{
		Implementation: transport.CoderWebsocketImplementation{
			AcceptOptions: websocket.AcceptOptions{OriginPatterns: origins},
		},
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h, _ := p["Authorization"].(string)
			if h == "" {
				h, _ = p["authorization"].(string)
			}
			if h == "" {
				return ctx, nil, nil // anonymous: only login and introspection
			}
			token, ok := rest.Bearer(h)
			if !ok {
				return ctx, nil, apperr.Unauthorized("connection_init's Authorization must be Bearer <token>")
			}
			v, err := svc.Authenticate(ctx, token)
			if err != nil {
				return ctx, nil, err
			}
			if a := accountFrom(ctx); a != nil {
				a.limiter, a.id, a.anonymous = a.keys, v.KeyID, false
			}
			return withToken(viewer.NewContext(ctx, v), token), nil, nil
		},
		KeepAlivePingInterval: keepAlive,
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
// that opens a stream (a WebSocket upgrade or SSE): they would cut it.
func streamDeadlines(c *gin.Context) {
	h := c.Request.Header
	if strings.EqualFold(h.Get("Upgrade"), "websocket") || strings.Contains(h.Get("Accept"), "text/event-stream") {
		rc := http.NewResponseController(c.Writer)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
	}
}

// streamEnd is where a subscription's resolver leaves why it ended.
type streamEnd struct {
	mu   sync.Mutex
	err  error
	sent bool
}

type streamEndKey struct{}

// endWithError is an operation middleware: for a subscription, the stream
// ends with a last response carrying the error its resolver left, presented
// with its code, before the transport completes it.
func endWithError(p presenter) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		op := graphql.GetOperationContext(ctx).Operation
		if op == nil || op.Operation != ast.Subscription {
			return next(ctx)
		}
		end := &streamEnd{}
		responses := next(context.WithValue(ctx, streamEndKey{}, end))
		return func(ctx context.Context) *graphql.Response {
			if r := responses(ctx); r != nil {
				return r
			}
			end.mu.Lock()
			defer end.mu.Unlock()
			if end.err == nil || end.sent {
				return nil
			}
			end.sent = true
			return &graphql.Response{Data: json.RawMessage("null"), Errors: gqlerror.List{p.present(ctx, end.err)}}
		}
	}
}

// itemEventTypes maps the schema's enum to the outbox's types.
var itemEventTypes = map[model.ItemEventType]string{
	model.ItemEventTypeCreated: "item.created",
	model.ItemEventTypeUpdated: "item.updated",
	model.ItemEventTypeDeleted: "item.deleted",
}

// subscribeItemEvents opens the service's stream and feeds the channel
// gqlgen reads, leaving the reason it ends for endWithError.
func subscribeItemEvents(ctx context.Context, svc *service.Service, types []model.ItemEventType, after *string) (<-chan *model.ItemEvent, error) {
	p := service.StreamParams{Token: tokenFrom(ctx)}
	for _, t := range types {
		p.Types = append(p.Types, itemEventTypes[t])
	}
	if after != nil {
		p.After = *after
	}
	st, err := svc.SubscribeEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	end, _ := ctx.Value(streamEndKey{}).(*streamEnd)
	ch := make(chan *model.ItemEvent)
	go func() {
		defer close(ch)
		defer st.Close()
		for {
			ev, err := st.Next(ctx)
			if err == nil {
				var out *model.ItemEvent
				if out, err = itemEvent(ev); err == nil {
					select {
					case ch <- out:
						continue
					case <-ctx.Done():
						return
					}
				}
			}
			if ctx.Err() == nil && end != nil {
				end.mu.Lock()
				end.err = err
				end.mu.Unlock()
			}
			return
		}
	}()
	return ch, nil
}

// itemEvent renders an event for GraphQL: the item as the change left it
// is in the event (an item.deleted one no longer exists).
func itemEvent(ev events.Event) (*model.ItemEvent, error) {
	var it resource.Item
	if err := json.Unmarshal(ev.Item, &it); err != nil {
		return nil, fmt.Errorf("event %s item: %w", ev.ID, err)
	}
	var typ model.ItemEventType
	for k, v := range itemEventTypes {
		if v == ev.Type {
			typ = k
		}
	}
	return &model.ItemEvent{
		ID:   ev.ID,
		Type: typ,
		Item: &ent.Item{
			ID: it.ID, Name: it.Name, Description: it.Description, Status: item.Status(it.Status),
			UserID: it.UserID, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
		},
		Timestamp: ev.Timestamp.UTC(),
	}, nil
}
