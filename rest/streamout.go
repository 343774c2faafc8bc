package rest

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// streamOut is where a Server-Sent Events stream writes its frames once its
// headers have gone out.
type streamOut interface {
	// write sends frames, in order, as one write to the client.
	write(frames ...[]byte) error
	// close ends the response.
	close()
}

// open takes the connection of an HTTP/1.1 stream over plain TCP from
// net/http, once the headers are on the wire (connStream, detached: the
// request may return and leave the connection to the stream), and
// otherwise writes through the response (responseStream, which the
// request must keep until the stream ends). The context it returns keeps
// the request's values and ends when the client leaves.
//
// A stream's cost is its writes: each goes out as one system call that
// gathers the frames where they lie, the frames the tailer rendered once
// for every stream they reach, where net/http would copy them through
// two buffers of a few kilobytes and write each time those fill.
func (t *Streams) open(c *gin.Context) (out streamOut, ctx context.Context, detached bool) {
	r := c.Request
	if t.takes(r) {
		if conn, rw, err := http.NewResponseController(c.Writer).Hijack(); err == nil {
			// The request's context ends when the request returns.
			ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
			s := &connStream{conn: conn, streams: t, cancel: cancel}
			t.add(s)
			go s.watch(rw.Reader)
			return s, ctx, true
		}
	}
	return responseStream{c.Writer}, r.Context(), false
}

// takes reports whether open will take r's connection: its response then
// says Connection: close, since the stream closes the connection when it
// ends and a client must not keep it for another request.
func (t *Streams) takes(r *http.Request) bool {
	return t != nil && r.ProtoMajor == 1 && r.ProtoMinor >= 1 && r.TLS == nil
}

// Streams are the event streams whose connections net/http handed over
// (Streams.open): its Server.Shutdown no longer waits for them, so the
// server waits with Shutdown. The zero value is ready; a nil *Streams
// leaves every stream with net/http.
type Streams struct {
	mu    sync.Mutex
	conns map[*connStream]struct{}
	empty chan struct{} // Shutdown waits: closed when the last one ends
	cut   bool          // Shutdown's deadline passed: connections close as they come
}

func (t *Streams) add(s *connStream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		_ = s.conn.Close()
	}
	if t.conns == nil {
		t.conns = make(map[*connStream]struct{})
	}
	t.conns[s] = struct{}{}
}

func (t *Streams) remove(s *connStream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, s)
	if len(t.conns) == 0 && t.empty != nil {
		close(t.empty)
		t.empty = nil
	}
}

// Shutdown waits for the streams to end, as the event hub ends them when
// the server stops (an "error" event, UNAVAILABLE), and closes the
// connections of those still open when ctx ends.
func (t *Streams) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if len(t.conns) == 0 {
		t.mu.Unlock()
		return nil
	}
	if t.empty == nil {
		t.empty = make(chan struct{})
	}
	empty := t.empty
	t.mu.Unlock()
	select {
	case <-empty:
		return nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	t.cut = true
	for s := range t.conns {
		_ = s.conn.Close() // its writer fails and ends the stream
	}
	t.mu.Unlock()
	return ctx.Err()
}

// responseStream writes through net/http: HTTP/2, TLS, or a writer that
// cannot be taken over.
type responseStream struct{ w gin.ResponseWriter }

func (s responseStream) write(frames ...[]byte) error {
	for _, f := range frames {
		if _, err := s.w.Write(f); err != nil {
			return err
		}
	}
	s.w.Flush()
	return nil
}

func (s responseStream) close() {}

// connStream writes a stream's chunks of HTTP/1.1's chunked encoding (the
// one net/http chose for the headers it sent) straight to its connection.
type connStream struct {
	conn    net.Conn
	streams *Streams
	cancel  context.CancelFunc // ends the stream's context
	size    [18]byte           // the size line's bytes
}

// chunkPool holds the chunks (size line, frames, CRLF) of the writes in
// progress.
var chunkPool = sync.Pool{New: func() any { return new(net.Buffers) }}

// streamWriteTimeout bounds one write to a stream: a client that has not
// taken a write's bytes by then is not reading, and its stream ends.
const streamWriteTimeout = 30 * time.Second

var crlf = []byte("\r\n")

func (s *connStream) write(frames ...[]byte) error {
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	if n == 0 {
		return nil
	}
	size := append(strconv.AppendInt(s.size[:0], int64(n), 16), '\r', '\n')
	chunk := chunkPool.Get().(*net.Buffers)
	*chunk = append(append(append((*chunk)[:0], size), frames...), crlf)
	bufs := *chunk // WriteTo consumes its receiver
	_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := bufs.WriteTo(s.conn)
	clear(*chunk) // the frames are not held past their write
	chunkPool.Put(chunk)
	return err
}

// close sends the last chunk and closes the connection: net/http no
// longer serves it.
func (s *connStream) close() {
	_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = s.conn.Write([]byte("0\r\n\r\n"))
	_ = s.conn.Close()
	s.cancel()
	s.streams.remove(s)
}

// watch cancels the stream when the client closes the connection (a read
// fails), which net/http no longer tells once the connection is taken.
// A client sends nothing on a stream; whatever it does send is dropped.
func (s *connStream) watch(r *bufio.Reader) {
	defer s.cancel()
	_, _ = r.Discard(r.Buffered())
	var b [64]byte
	for {
		if _, err := s.conn.Read(b[:]); err != nil {
			return
		}
	}
}
