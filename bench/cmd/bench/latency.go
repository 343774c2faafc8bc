package main

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// delayProxy is a TCP proxy that delays every chunk by the same latency
// each way, as a network link between the server and its database would:
// PostgreSQL through it is the database one round trip of twice the latency
// away. Each chunk is stamped when read and released at stamp + latency, in
// order, so the delay adds latency without limiting throughput (a chunk
// never waits for the one before it to have waited).
type delayProxy struct {
	ln      net.Listener
	target  string
	latency atomic.Int64 // nanoseconds; set changes it
	wg      sync.WaitGroup
}

// startDelayProxy listens on a free local port and forwards each connection
// to target with latency each way.
func startDelayProxy(target string, latency time.Duration) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, target: target}
	p.set(latency)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// set changes the delay each way for the chunks read from now on: the
// pgwrites row measures one server through the delayed link and, in turns,
// through the same proxy without delay (a second server would hold a
// second pool of connections, past what PostgreSQL allows by default).
func (p *delayProxy) set(latency time.Duration) { p.latency.Store(int64(latency)) }

// addr is where the proxy listens (host:port).
func (p *delayProxy) addr() string { return p.ln.Addr().String() }

// close stops accepting; open connections end with their ends.
func (p *delayProxy) close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *delayProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.link(c)
	}
}

// link forwards one connection both ways, then closes both ends.
func (p *delayProxy) link(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client); done <- struct{}{} }()
	go func() { p.pipe(client, server); done <- struct{}{} }()
	<-done // one side ended: the other cannot go on
}

// chunk is what one read got, and when it may be written.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk latency after it was read.
func (p *delayProxy) pipe(dst, src net.Conn) {
	queue := make(chan chunk, 4096)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for c := range queue {
			if d := time.Until(c.at); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.b); err != nil {
				for range queue { // drain so that the reader never blocks
				}
				return
			}
		}
	}()
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			queue <- chunk{b: buf[:n], at: time.Now().Add(time.Duration(p.latency.Load()))}
		}
		if err != nil {
			close(queue)
			<-written
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}
			return
		}
	}
}
