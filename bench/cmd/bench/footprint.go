package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// footprint is what a run costs besides time: the binaries' sizes, each
// server's resident set after it started and before any load, and the
// largest the server's SQLite write-ahead log grew during the rows (the
// reference writes a copy of the seeded file).
type footprint struct {
	ServerBinary, RefBinary int64 // bytes
	ServerIdle, RefIdle     int64 // bytes, VmRSS
	WALMax                  int64 // bytes, over the rows; -1: not SQLite
	WALRows                 []string
}

// walWatch samples the size of a write-ahead log until stopped.
type walWatch struct {
	path string
	stop chan struct{}
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	max  int64 // since the last take
	all  int64 // since the first take
	rows bool  // taken once: the rows have started
}

// walEvery is how often the log's size is sampled.
const walEvery = 20 * time.Millisecond

func watchWAL(path string) *walWatch {
	w := &walWatch{path: path, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(walEvery)
		defer t.Stop()
		for {
			if st, err := os.Stat(w.path); err == nil {
				w.mu.Lock()
				w.max = max(w.max, st.Size())
				if w.rows {
					w.all = max(w.all, st.Size())
				}
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// take returns the largest size seen since the last take (or the start)
// and starts over.
func (w *walWatch) take() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.max
	w.max, w.rows = 0, true
	return m
}

// finish stops the sampling and returns the largest size seen since the
// first take: the log the seeding left, which the servers then checkpoint,
// does not count.
func (w *walWatch) finish() int64 {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return w.all
}

// lines describes the footprint, one fact a line.
func (f footprint) lines() []string {
	out := []string{
		fmt.Sprintf("binary (-trimpath -ldflags='-s -w'): server %.1f MB, reference %.1f MB", float64(f.ServerBinary)/1e6, float64(f.RefBinary)/1e6),
		fmt.Sprintf("idle RSS after start: server %s MiB, reference %s MiB", mib(f.ServerIdle), mib(f.RefIdle)),
	}
	if f.WALMax >= 0 {
		out = append(out, fmt.Sprintf("SQLite write-ahead log, largest during the rows (sampled every %s): %s MiB; by row: %s",
			walEvery, mib(f.WALMax), strings.Join(f.WALRows, ", ")))
	}
	return out
}
