package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler fetches the server's profiles from its bench-only pprof listener.
type profiler struct {
	dir  string
	addr string
	turn int
}

func newProfiler(dir string) (*profiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return &profiler{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", port)}, nil
}

// cpu starts a CPU profile of d (whole seconds, at least one) and reports on
// the channel when it is saved. Each turn of a row gets its own file;
// `go tool pprof` merges them when given all.
func (p *profiler) cpu(ctx context.Context, who, row string, d time.Duration) <-chan error {
	done := make(chan error, 1)
	secs := max(1, int(d.Seconds()))
	p.turn++
	name := fmt.Sprintf("%s.cpu.%d.pprof", row, p.turn)
	go func() {
		done <- p.fetch(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), name)
	}()
	return done
}

// allocs saves the allocation profile (cumulative since the server started).
func (p *profiler) allocs(ctx context.Context, row string) error {
	return p.fetch(ctx, "/debug/pprof/allocs", row+".allocs.pprof")
}

// heap saves the heap profile now (what is live, and where it was
// allocated), and its text form, which ends with the runtime's memory
// statistics (stacks, heap released and idle) that tell RSS apart.
func (p *profiler) heap(ctx context.Context, row string) error {
	if err := p.fetch(ctx, "/debug/pprof/heap?gc=1", row+".heap.pprof"); err != nil {
		return err
	}
	return p.fetch(ctx, "/debug/pprof/heap?debug=1", row+".heap.txt")
}

func (p *profiler) fetch(ctx context.Context, path, name string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+p.addr+path, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch profile: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch profile %s: status %d", path, res.StatusCode)
	}
	f, err := os.Create(filepath.Join(p.dir, name))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
