package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
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

type eventsHandler struct {
	svc     *service.Service
	streams *Streams
}

// bindEvents binds the /events routes; the stream also takes its token from
// access_token, which is all a browser's EventSource can send.
func bindEvents(v1 *gin.RouterGroup, svc *service.Service, streams *Streams, authenticated []gin.HandlerFunc) {
	h := eventsHandler{svc: svc, streams: streams}
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
	p, err := parseEventListParams(c.Request.Context(), h.svc, c.Request.URL.Query())
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

	rc := http.NewResponseController(c.Writer)
	_ = rc.SetWriteDeadline(time.Time{}) // the server's WriteTimeout would cut the stream
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	if h.streams.takes(c.Request) {
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(http.StatusOK)
	w.Flush() // the headers; a connection is taken over before any body
	out, ctx, detached := h.streams.open(c)
	if detached {
		// The connection is the stream's alone: the request returns and
		// frees what serving it held (its goroutine's deep stack, its
		// buffers), and a goroutine of its own serves the stream.
		go serveStream(ctx, st, out, logger(c))
		return
	}
	serveStream(ctx, st, out, logger(c))
}

// serveStream writes st to out until one of them ends, then closes both.
// One goroutine waits and writes: once it has an event, it lingers until
// the stream's flush deadline (events.Subscription.Linger), then writes
// every event waiting in one write. Live frames are rendered once by the
// tailer for all the streams they reach, and a write only gathers them
// (streamOut), so a stream holds no buffer of its own.
func serveStream(ctx context.Context, st *service.Stream, out streamOut, log *slog.Logger) {
	defer st.Close()
	defer out.close()
	// Tell the client how soon to come back, before the first event.
	if out.write(retryFrame) != nil {
		return
	}
	keepAlive := time.NewTimer(keepAliveEvery)
	defer keepAlive.Stop()
	for {
		ev, err := st.NextOrIdle(ctx, keepAlive.C)
		switch {
		case errors.Is(err, events.ErrIdle):
			if out.write(keepAliveFrame) != nil {
				return
			}
			keepAlive.Reset(keepAliveEvery)
			continue
		case err != nil:
			if ctx.Err() == nil {
				_ = out.write(streamErrorFrame(ctx, log, err))
			}
			return
		}
		st.Linger(ctx)
		for more := true; more; {
			frames := framesPool.Get().(*[][]byte)
			*frames, more, err = gather(st, ev, (*frames)[:0])
			werr := out.write(*frames...)
			clear(*frames) // the frames are not held past their write
			framesPool.Put(frames)
			switch {
			case err != nil:
				_ = out.write(streamErrorFrame(ctx, log, err)) // after what came before it
				return
			case werr != nil:
				return // the client left
			}
			if more {
				ev, more = st.TryNext()
			}
		}
		keepAlive.Reset(keepAliveEvery)
		// Let the requests the poller found waiting run before the next
		// stream's write: the streams a read of the outbox woke would
		// otherwise take their turns one after another, and a request
		// would wait behind all of them.
		runtime.Gosched()
	}
}

// maxWriteFrames is the most events one write to a stream carries: a
// stream far behind catches up in several writes, and what a write holds
// (its list of frames, the system call's vector that the connection keeps)
// stays small, while a write's cost is still spread over many events.
const maxWriteFrames = 64

// framesPool holds the frame lists of the writes in progress: a stream
// holds none between its writes.
var framesPool = sync.Pool{New: func() any { return new([][]byte) }}

// gather appends to frames the frame of ev and those of the events waiting
// after it, up to maxWriteFrames; full reports that it stopped there.
func gather(st *service.Stream, ev events.Event, frames [][]byte) (_ [][]byte, full bool, err error) {
	for {
		frame, err := ev.SSEFrame()
		if err != nil {
			return frames, false, err
		}
		frames = append(frames, frame)
		if len(frames) == maxWriteFrames {
			return frames, true, nil
		}
		var ok bool
		if ev, ok = st.TryNext(); !ok {
			return frames, false, nil
		}
	}
}

// retryFrame opens a stream: how soon the client should come back, and
// keepAliveFrame is the comment an idle stream sends.
var (
	retryFrame     = []byte("retry: 1000\n\n")
	keepAliveFrame = []byte(": keep-alive\n\n")
)

// streamErrorFrame is the "error" event that ends a stream: the error part
// of the failure envelope.
func streamErrorFrame(ctx context.Context, log *slog.Logger, err error) []byte {
	e := apperr.FromRequest(ctx, err)
	if e.Code == apperr.CodeInternal || (e.Code == apperr.CodeUnavailable && !errors.Is(err, events.ErrShutdown)) {
		log.ErrorContext(ctx, "event stream failed", "code", e.Code, "err", err)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	body, _ := json.Marshal(errorBody{Code: e.Code, Message: e.Message, Details: details})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", body)
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
