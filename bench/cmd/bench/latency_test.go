package main

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestDelayProxy: bytes cross the proxy intact and in order, each way no
// sooner than its delay, and chunks sent back to back are not delayed one
// after another (the delay adds latency, it does not limit throughput).
func TestDelayProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	const latency = 20 * time.Millisecond
	p, err := startDelayProxy(ln.Addr().String(), latency)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// 50 chunks back to back: all back after about one round trip, not 50.
	var sent bytes.Buffer
	start := time.Now()
	for i := range 50 {
		msg := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i)
		sent.Write(msg)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, sent.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if !bytes.Equal(got, sent.Bytes()) {
		t.Fatal("the echo differs from what was sent")
	}
	if took < 2*latency {
		t.Fatalf("round trip took %s, want at least %s", took, 2*latency)
	}
	if took > 20*latency {
		t.Fatalf("50 chunks took %s: the delays add up instead of overlapping", took)
	}

	// Without delay, the same link answers at once.
	p.set(0)
	start = time.Now()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, got[:1]); err != nil || got[0] != 'x' {
		t.Fatalf("echo %q, %v", got[:1], err)
	}
	if took := time.Since(start); took >= 2*latency {
		t.Fatalf("undelayed round trip took %s", took)
	}
}
