package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/service"
)

// EventStreamPath is the route of the Server-Sent Events feed.
const EventStreamPath = "/v1/events/stream"

// keepAliveEvery is how often an idle stream sends a comment, so that
// proxies and clients do not take it for a dead connection.
const keepAliveEvery = 15 * time.Second

type eventsHandler struct{ svc *service.Service }

// bindEvents binds the /events routes; the stream also takes its token from
// access_token, which is all a browser's EventSource can send.
func bindEvents(v1 *gin.RouterGroup, svc *service.Service, authenticated []gin.HandlerFunc) {
	h := eventsHandler{svc: svc}
	stream := append([]gin.HandlerFunc{queryToken}, authenticated...)
	v1.GET("/events/stream", append(stream, h.stream)...)
	api := v1.Group("", authenticated...)
	api.GET("/events", h.list)
	api.GET("/events/:id", h.get)
}

// eventsPagination is the pagination of GET /events: a cursor, no counts.
type eventsPagination struct {
	Limit      int        `json:"limit"`
	NextCursor nextCursor `json:"next_cursor"`
}

func (h eventsHandler) list(c *gin.Context) {
	p, err := service.ParseEventListParams(c.Request.URL.Query())
	if err != nil {
		renderError(c, err)
		return
	}
	page, err := h.svc.ListEvents(c.Request.Context(), p)
	if err != nil {
		renderError(c, err)
		return
	}
	data := make([]events.Body, len(page.Events))
	for i, ev := range page.Events {
		data[i] = ev.Body()
	}
	m := newMeta(c)
	m.Pagination = eventsPagination{Limit: p.Limit, NextCursor: nextCursor{offered: true, value: page.Next}}
	writeJSON(c, http.StatusOK, success{Success: true, Data: data, Meta: m})
}

func (h eventsHandler) get(c *gin.Context) {
	ev, err := h.svc.GetEvent(c.Request.Context(), c.Param("id"))
	if err != nil {
		renderError(c, err)
		return
	}
	renderData(c, http.StatusOK, ev.Body())
}

// stream serves GET /v1/events/stream: every event the caller may see from
// Last-Event-ID (or after) on, then live, as Server-Sent Events whose id is
// the event id. It ends with an "error" event carrying the envelope's
// code when the client is too slow (SLOW_CONSUMER), its token expires or
// its key is revoked, or the server stops.
func (h eventsHandler) stream(c *gin.Context) {
	q := c.Request.URL.Query()
	p := service.StreamParams{After: c.GetHeader("Last-Event-ID")}
	if p.After == "" {
		p.After = q.Get("after")
	}
	if v, ok := q["type"]; ok && len(v) > 0 {
		types, err := service.ParseEventTypes("type", strings.Split(v[0], ","))
		if err != nil {
			renderError(c, err)
			return
		}
		p.Types = types
	}
	p.Token, _ = httpapi.Bearer(c.GetHeader("Authorization"))
	// The request's deadline (REQUEST_TIMEOUT) does not hold the stream:
	// deadline() leaves streams out; the hub bounds each of its queries.
	ctx := c.Request.Context()
	st, err := h.svc.SubscribeEvents(ctx, p)
	if err != nil {
		renderError(c, err)
		return
	}
	defer st.Close()

	rc := http.NewResponseController(c.Writer)
	_ = rc.SetWriteDeadline(time.Time{}) // the server's WriteTimeout would cut the stream
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// Tell the client how soon to come back; then flush the headers so it
	// knows the stream is open before the first event.
	fmt.Fprint(w, "retry: 1000\n\n")
	w.Flush()

	// One goroutine waits and writes: once it has an event, it lingers
	// until the stream's flush deadline (events.Subscription.Linger), then
	// writes every event waiting, live frames rendered once by the tailer
	// for all streams, with one Write and one Flush from a buffer it
	// borrows for that write only: a thousand idle streams hold none.
	keepAlive := time.NewTimer(keepAliveEvery)
	defer keepAlive.Stop()
	for {
		ev, err := st.NextOrIdle(ctx, keepAlive.C)
		switch {
		case errors.Is(err, events.ErrIdle):
			fmt.Fprint(w, ": keep-alive\n\n")
			w.Flush()
			keepAlive.Reset(keepAliveEvery)
			continue
		case err != nil:
			if ctx.Err() == nil {
				writeStreamError(c, err)
			}
			return
		}
		st.Linger(ctx)
		buf := streamBuffers.Get().(*[]byte)
		*buf = (*buf)[:0]
		for ok := true; ok; ev, ok = st.TryNext() {
			if *buf, err = ev.AppendSSE(*buf); err != nil {
				break
			}
		}
		_, werr := w.Write(*buf)
		if cap(*buf) <= maxStreamBuffer {
			streamBuffers.Put(buf) // a burst's buffer is left to the collector
		}
		switch {
		case err != nil:
			writeStreamError(c, err) // after what came before it
			return
		case werr != nil:
			return // the client left
		}
		w.Flush()
		keepAlive.Reset(keepAliveEvery)
	}
}

// streamBuffers are the buffers the streams gather a write's frames in.
var streamBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxStreamBuffer is the largest write buffer returned to streamBuffers.
const maxStreamBuffer = 64 << 10

// writeStreamError ends a stream with an "error" event: the error part of
// the failure envelope.
func writeStreamError(c *gin.Context, err error) {
	e := apperr.FromRequest(c.Request.Context(), err)
	if e.Code == apperr.CodeInternal || (e.Code == apperr.CodeUnavailable && !errors.Is(err, events.ErrShutdown)) {
		logger(c).ErrorContext(c.Request.Context(), "event stream failed", "code", e.Code, "err", err)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	body, _ := json.Marshal(errorBody{Code: e.Code, Message: e.Message, Details: details})
	fmt.Fprintf(c.Writer, "event: error\ndata: %s\n\n", body)
	c.Writer.Flush()
}

// queryToken lets a request without an Authorization header carry its token
// in access_token, as a browser's EventSource must (it sends no headers).
// The access log records routes, never queries.
func queryToken(c *gin.Context) {
	if c.GetHeader("Authorization") == "" {
		if t := c.Query("access_token"); t != "" {
			c.Request.Header.Set("Authorization", "Bearer "+t)
		}
	}
	c.Next()
}
