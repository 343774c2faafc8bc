package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/viewer"
)

// gqlgen's WebSocket transport (v0.17.95) speaks graphql-transport-ws but
// leaves out parts of the protocol: a missing connection_init closes with
// 1002 (and only with InitTimeout set), a malformed message with 1000, a
// second subscribe with an id in use replaces the first in its table and
// leaves that stream running, unreached by complete. It also authenticates
// once per connection. This file wraps the connection gqlgen reads from:
// every client message passes socket.admit before gqlgen sees it, which
// closes with the protocol's codes and checks the connection's token again
// for each subscribe, by REST's rule (service.Authenticate and its key
// cache), so that a revoked key or an expired token stops working on an open
// socket as it does on a request.

// Close codes of graphql-transport-ws (github.com/enisdenjo/graphql-ws,
// PROTOCOL.md).
const (
	closeBadRequest      = 4400 // a message that is not JSON or not of the protocol
	closeUnauthorized    = 4401 // subscribe before connection_init
	closeForbidden       = 4403 // the connection's token no longer holds
	closeInitTimeout     = 4408 // no connection_init in time
	closeSubscriberTaken = 4409 // subscribe with an id in use
	closeTooManyInits    = 4429 // a second connection_init
)

// defaultInitTimeout is how long a socket may stay open without a
// connection_init: graphql-ws's own client sends it at once; its server's
// default wait is 3s.
const defaultInitTimeout = 10 * time.Second

// keyCheckTimeout bounds the key lookup of an operation's check, which
// holds the connection's reads.
const keyCheckTimeout = 5 * time.Second

// graphqlTransportWS is the subprotocol whose close codes socket applies;
// the legacy graphql-ws (subscriptions-transport-ws) one only gets the
// per-operation check.
const graphqlTransportWS = "graphql-transport-ws"

// errSocketClosed ends gqlgen's read loop once socket has closed the
// connection with a code of its own.
var errSocketClosed = errors.New("websocket closed by the protocol guard")

// socket is the state of one WebSocket the protocol needs beyond gqlgen's:
// whether connection_init came, the ids in use, the connection's token.
type socket struct {
	// ctx is the upgrade request's, for the key lookups of the checks.
	ctx   context.Context
	svc   *service.Service
	conn  transport.WebsocketConn
	timer *time.Timer
	// strict: the graphql-transport-ws subprotocol, whose close codes apply.
	strict bool

	mu     sync.Mutex
	inited bool
	closed bool
	active map[string]struct{}
	token  string
	viewer viewer.Viewer
}

type socketKey struct{}

// socketFrom is the socket an operation runs on, if any.
func socketFrom(ctx context.Context) *socket {
	s, _ := ctx.Value(socketKey{}).(*socket)
	return s
}

// guardedImplementation accepts connections through Implementation and
// hands gqlgen a guarded one.
type guardedImplementation struct {
	transport.WebsocketImplementation
	s           *socket
	initTimeout time.Duration
}

// Accept implements transport.WebsocketImplementation.
func (g guardedImplementation) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := g.WebsocketImplementation.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	g.s.conn = c
	g.s.strict = c.Subprotocol() == graphqlTransportWS
	g.s.active = map[string]struct{}{}
	g.s.timer = time.AfterFunc(g.initTimeout, func() {
		g.s.mu.Lock()
		defer g.s.mu.Unlock()
		if !g.s.inited {
			g.s.closeLocked(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	return guardedConn{WebsocketConn: c, s: g.s}, nil
}

// guardedConn is the connection gqlgen reads and writes.
type guardedConn struct {
	transport.WebsocketConn
	s *socket
}

// NextReader implements transport.WebsocketConn: the next message, once
// socket.admit has let it through.
func (c guardedConn) NextReader() (int, io.Reader, error) {
	for {
		typ, r, err := c.WebsocketConn.NextReader()
		if err != nil {
			return typ, r, err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		pass, err := c.s.admit(data)
		if err != nil {
			return typ, nil, err
		}
		if pass {
			return typ, bytes.NewReader(data), nil
		}
	}
}

// WriteJSON implements transport.WebsocketConn, freeing the id of an
// operation the server completes (complete, error) for a new subscribe.
// (An id the client completes and reuses at once may be freed again by the
// first operation's late complete: gqlgen's own table has the same race;
// graphql-ws clients never reuse ids.)
func (c guardedConn) WriteJSON(v any) error {
	if typ, id, ok := messageHeader(v); ok && (typ == "complete" || typ == "error") {
		c.s.mu.Lock()
		delete(c.s.active, id)
		c.s.mu.Unlock()
	}
	return c.WebsocketConn.WriteJSON(v)
}

// Close implements io.Closer.
func (c guardedConn) Close() error {
	c.s.timer.Stop()
	return c.WebsocketConn.Close()
}

// SetReadLimit implements transport.WebsocketReadLimiter when the wrapped
// connection does.
func (c guardedConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

// SetReadDeadline implements transport.WebsocketReadDeadliner when the
// wrapped connection does.
func (c guardedConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// messageHeader reads the type and id of a message gqlgen writes: its
// message types are unexported, so by their exported fields Type and ID
// (v0.17.95: graphqltransportwsMessage, graphqlwsMessage). Should they
// change shape, ok is false and no id is freed: reusing an id after its
// completion then closes 4409, which TestWebSocketProtocol catches.
func messageHeader(v any) (typ, id string, ok bool) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return "", "", false
	}
	t, i := rv.FieldByName("Type"), rv.FieldByName("ID")
	if t.Kind() != reflect.String || i.Kind() != reflect.String {
		return "", "", false
	}
	return t.String(), i.String(), true
}

// clientMessage is what admit reads of a client's message.
type clientMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// admit checks one client message against the protocol and, for a
// subscribe, the connection's token: pass, the message goes on to gqlgen;
// not, it was answered here (an operation refused); an error, the
// connection is closed (errSocketClosed).
//
// Only gqlgen's read loop calls it, one message at a time.
func (s *socket) admit(data []byte) (pass bool, _ error) {
	var m clientMessage
	err := json.Unmarshal(data, &m)
	if !s.strict {
		return s.admitLegacy(m, err)
	}
	if m.Type == "subscribe" && err == nil {
		if pass, err := s.admitSubscribe(m); !pass {
			return false, err
		}
		// The key lookup is made without the lock, which the writes of
		// the connection's other operations take.
		if pass, err := s.authorize(m.ID); !pass {
			return false, err
		}
		s.mu.Lock()
		s.active[m.ID] = struct{}{}
		s.mu.Unlock()
		return true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return false, s.closeLocked(closeBadRequest, "Invalid message received")
	}
	switch m.Type {
	case "connection_init":
		if s.inited {
			return false, s.closeLocked(closeTooManyInits, "Too many initialisation requests")
		}
		s.inited = true
		s.timer.Stop()
	case "complete":
		delete(s.active, m.ID)
	case "ping", "pong":
		if !s.inited {
			// The protocol allows them at any time; gqlgen's wait for
			// connection_init would close 1002 on them.
			if m.Type == "ping" {
				_ = s.conn.WriteJSON(struct {
					Type string `json:"type"`
				}{"pong"})
			}
			return false, nil
		}
	default:
		return false, s.closeLocked(closeBadRequest, "Invalid message received")
	}
	return true, nil
}

// admitLegacy checks one message of the legacy graphql-ws protocol
// (subscriptions-transport-ws, also spoken when the client names no
// subprotocol): connection_init ends the wait for it, and a start runs
// only with an id not in use and a token that still holds. gqlgen would
// replace a running operation of the same id in its table and leave it
// streaming, unreached by stop, holding a stream slot: the connection is
// closed 4409 instead, as on graphql-transport-ws. Other messages go to
// gqlgen as they are (it has no close codes of its own for them).
func (s *socket) admitLegacy(m clientMessage, decodeErr error) (pass bool, _ error) {
	if decodeErr != nil {
		return true, nil
	}
	switch m.Type {
	case "connection_init":
		s.mu.Lock()
		s.inited = true
		s.timer.Stop()
		s.mu.Unlock()
	case "start":
		s.mu.Lock()
		if _, taken := s.active[m.ID]; taken {
			defer s.mu.Unlock()
			return false, s.closeLocked(closeSubscriberTaken, fmt.Sprintf("Subscriber for %s already exists", m.ID))
		}
		s.mu.Unlock()
		if pass, err := s.authorize(m.ID); !pass {
			return false, err
		}
		s.mu.Lock()
		s.active[m.ID] = struct{}{}
		s.mu.Unlock()
	case "stop":
		s.mu.Lock()
		delete(s.active, m.ID)
		s.mu.Unlock()
	}
	return true, nil
}

// admitSubscribe checks a subscribe against the protocol: after
// connection_init, with an id not in use and a payload.
func (s *socket) admitSubscribe(m clientMessage) (pass bool, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch _, taken := s.active[m.ID]; {
	case !s.inited:
		return false, s.closeLocked(closeUnauthorized, "Unauthorized")
	case m.ID == "" || !validPayload(m.Payload):
		return false, s.closeLocked(closeBadRequest, "Invalid message received")
	case taken:
		return false, s.closeLocked(closeSubscriberTaken, fmt.Sprintf("Subscriber for %s already exists", m.ID))
	}
	return true, nil
}

// validPayload: a subscribe's payload is an object with a query string, as
// the protocol requires; gqlgen would answer anything else with an error
// without a code ("invalid json") and keep the connection.
func validPayload(p json.RawMessage) bool {
	var op struct {
		Query *string `json:"query"`
	}
	return json.Unmarshal(p, &op) == nil && op.Query != nil && *op.Query != ""
}

// authorize checks the connection's token again before operation id
// runs, as REST checks a request's: on a refusal the operation gets an
// error with its code (UNAUTHORIZED, TOKEN_EXPIRED) and the connection is
// closed 4403. An anonymous connection has no token to check: the cost
// extension lets it run only login and introspection.
func (s *socket) authorize(id string) (pass bool, _ error) {
	s.mu.Lock()
	token := s.token
	s.mu.Unlock()
	if token == "" {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, keyCheckTimeout)
	defer cancel()
	v, err := s.svc.Authenticate(ctx, token)
	if err == nil {
		s.mu.Lock()
		s.viewer = v
		s.mu.Unlock()
		return true, nil
	}
	var e *apperr.Error
	if !errors.As(err, &e) {
		// The key's state could not be read (database down): refuse this
		// operation as a request would be, and keep the connection.
		e = apperr.Unavailable(err)
	}
	b, _ := json.Marshal(gqlerror.List{refusal(e)})
	_ = s.conn.WriteJSON(struct {
		ID      string          `json:"id"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}{id, "error", b})
	if e.Code != apperr.CodeUnauthorized && e.Code != apperr.CodeTokenExpired {
		return false, nil
	}
	s.forbid()
	return false, errSocketClosed
}

// closeLocked closes the connection with code, once.
func (s *socket) closeLocked(code int, reason string) error {
	if !s.closed {
		s.closed = true
		s.timer.Stop()
		_ = s.conn.WriteClose(code, reason)
	}
	return errSocketClosed
}

// forbid closes the connection 4403: a stream on it found the token no
// longer holds.
func (s *socket) forbid() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.closeLocked(closeForbidden, "Forbidden")
}

// setToken records the token connection_init authenticated.
func (s *socket) setToken(token string, v viewer.Viewer) {
	s.mu.Lock()
	s.token, s.viewer = token, v
	s.mu.Unlock()
}

// currentViewer is the viewer the latest check of the token found.
func (s *socket) currentViewer() viewer.Viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewer
}

// socketViewer is an operation middleware: an operation on an authenticated
// socket runs as the viewer its own check found (a role changed since
// connection_init counts, as it does on the next request).
func socketViewer(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if s := socketFrom(ctx); s != nil {
		if v := s.currentViewer(); v.UserID != "" {
			ctx = viewer.NewContext(ctx, v)
		}
	}
	return next(ctx)
}
