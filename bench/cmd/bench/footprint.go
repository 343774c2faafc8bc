package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
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
	// BatchRows is, per row of an SQLite run, how many transactions the
	// server's commits held on average (group commit), from its /metrics.
	BatchRows []string
	// TracedIdle is the idle RSS of each traced server (traced.go), when
	// a traced row ran.
	TracedIdle []string
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

// The footprint's targets: the server's binary, its resident set
// before any load, and its write-ahead log through the rows.
const (
	maxBinary = 40e6     // bytes, built as deployed
	maxIdle   = 20 << 20 // bytes
	maxWAL    = 64 << 20 // bytes
)

// lines describes the footprint, one fact a line, each with its target's
// verdict.
func (f footprint) lines() []string {
	out := []string{
		fmt.Sprintf("binary (-trimpath -ldflags='-s -w'): server %.1f MB, reference %.1f MB (target ≤ %.0f MB: %s)",
			float64(f.ServerBinary)/1e6, float64(f.RefBinary)/1e6, maxBinary/1e6, verdict(f.ServerBinary <= maxBinary)),
		fmt.Sprintf("idle RSS after start: server %s MiB, reference %s MiB (target ≤ %s MiB: %s)",
			mib(f.ServerIdle), mib(f.RefIdle), mib(maxIdle), verdict(f.ServerIdle <= maxIdle)),
	}
	if len(f.TracedIdle) > 0 {
		out = append(out, "idle RSS after start of the servers with tracing on: "+strings.Join(f.TracedIdle, ", "))
	}
	if f.WALMax >= 0 {
		out = append(out, fmt.Sprintf("SQLite write-ahead log, largest during the rows (sampled every %s): %s MiB (target < %s MiB: %s); by row: %s",
			walEvery, mib(f.WALMax), mib(maxWAL), verdict(f.WALMax < maxWAL), strings.Join(f.WALRows, ", ")))
	}
	if len(f.BatchRows) > 0 {
		out = append(out, "SQLite group commit, transactions per commit of the server by row: "+strings.Join(f.BatchRows, ", "))
	}
	return out
}

// verdict words a check of a target as the rows' verdicts do.
func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

// batchCounts reads the server's SQLite commit counters from /metrics:
// commits and the transactions they held (both 0 on PostgreSQL).
func batchCounts(base string) (commits, txs float64) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "itemsvc_sqlite_commits_total":
			commits = v
		case "itemsvc_sqlite_committed_transactions_total":
			txs = v
		}
	}
	return commits, txs
}
