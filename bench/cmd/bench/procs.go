package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// moduleRoot is the folder of go.mod, so that the command runs from anywhere
// in the tree.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run inside the itemsvc module")
	}
	return filepath.Dir(gomod), nil
}

type binaries struct {
	server, reference   string
	serverSize, refSize int64 // bytes
}

// build compiles the two servers as they would be deployed: the server with
// `make build`'s flags, the reference with the same linker flags; both with
// CGO_ENABLED=0, as `make build` does (static, no libc mapped: both SQLite
// drivers are pure Go).
// With profiling the server also gets the bench-only pprof listener
// (cmd/server/pprof_bench.go).
func build(ctx context.Context, root, work string, profiling bool) (binaries, error) {
	b := binaries{server: filepath.Join(work, "server"), reference: filepath.Join(work, "reference")}
	tags := "nomsgpack,grpcnotrace"
	if profiling {
		tags += ",benchpprof"
	}
	for _, t := range []struct {
		out, pkg, tags string
		size           *int64
	}{{b.server, "./cmd/server", tags, &b.serverSize}, {b.reference, "./bench/reference", "", &b.refSize}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-tags="+t.tags, "-o", t.out, t.pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %w\n%s", t.pkg, err, out)
		}
		st, err := os.Stat(t.out)
		if err != nil {
			return b, err
		}
		*t.size = st.Size()
	}
	return b, nil
}

// serverEnv is the environment of both servers and of the seeding commands:
// the benchmark's database, one signing secret both servers verify with, and
// rate limits too high to interfere.
func serverEnv(databaseURL string) []string {
	env := []string{
		"DATABASE_URL=" + databaseURL,
		"JWT_SECRET=0c7e5b2a94f1d83e6a0b57c2f9d14e8a3b6c0f7d29e5a1c84b3f6d0e7a92c51b",
		"SECRET_KEY=e4a19c7f3b0d6e2a85f1c9b47d3e0a6c2f8b5d1e9a7c3f06b4e2d8a1c5f97b30",
		"RATE_LIMIT_PER_MINUTE=1000000000",
		"RATE_LIMIT_PER_HOUR=1000000000",
		"LOG_LEVEL=info",
		"REDIS_URL=",
		"SANDBOX=false",
		// The realtime row opens 100 streams per seeded key.
		"EVENT_STREAMS_PER_KEY=2000",
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "TMPDIR", "LANG":
			env = append(env, kv)
		case "EVENT_FLUSH_INTERVAL", "DATABASE_MAX_CONNS", "DATABASE_BATCH_WINDOW":
			// Settings a run may vary on purpose (the realtime row's
			// batching; the PostgreSQL pool; SQLite's group commit): the note
			// should say so.
			env = append(env, kv)
		}
	}
	return env
}

// process is a running server under measurement.
type process struct {
	name string
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	log  *os.File
	done chan error
}

// startProcess starts a server on a free port (on cpu when ≥ 0) with its log
// in the work folder, and waits until it answers HTTP.
func startProcess(ctx context.Context, name string, cpu int, work string, env []string, bin string, args ...string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if name == "reference" {
		args = append(args, "-addr", addr)
	}
	argv := append([]string{bin}, args...)
	if cpu >= 0 {
		argv = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
	}
	logf, err := os.Create(filepath.Join(work, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, env...), "ADDR="+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, base: "http://" + addr, log: logf, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	if err := p.waitReady(ctx, 30*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s did not start: %w (log: %s)", name, err, lastLines(logf.Name(), 5))
	}
	return p, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls until the server answers any HTTP response.
func (p *process) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		res, err := client.Get(p.base + "/v1/items")
		if err == nil {
			res.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case err := <-p.done:
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// stop asks the server to finish, and kills it if it does not.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// resetPeakRSS restarts the kernel's peak-RSS record of the process (VmHWM),
// so that each row reports its own peak. It reports whether it could.
func (p *process) resetPeakRSS() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident set size (VmHWM) in bytes.
func (p *process) peakRSS() (int64, error) { return p.status("VmHWM:") }

// rss is the process's resident set size now (VmRSS) in bytes.
func (p *process) rss() (int64, error) { return p.status("VmRSS:") }

// status reads a size in kB from the process's /proc status.
func (p *process) status(field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

func lastLines(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// pinning is the CPU placement of a run.
type pinning struct {
	serverCPU, loadCPU int // -1: not pinned
	reason             string
}

// detectPinning chooses the standard configuration (servers on CPU 0, load
// generator on CPU 1) when taskset exists and there are two CPUs.
func detectPinning() pinning {
	if _, err := exec.LookPath("taskset"); err != nil {
		return pinning{serverCPU: -1, loadCPU: -1, reason: "taskset not found"}
	}
	if runtime.NumCPU() < 2 {
		return pinning{serverCPU: -1, loadCPU: -1, reason: "fewer than 2 CPUs"}
	}
	return pinning{serverCPU: 0, loadCPU: 1}
}

// pinSelf moves every thread of this process to the load CPU; threads made
// later inherit it.
func (p pinning) pinSelf() error {
	if p.loadCPU < 0 {
		return nil
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(p.loadCPU), strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset the load generator: %w: %s", err, out)
	}
	runtime.GOMAXPROCS(1)
	return nil
}

func (p pinning) describe() string {
	if p.serverCPU < 0 {
		return "unpinned (" + p.reason + "): servers and load generator share all CPUs; figures are not comparable with the standard configuration"
	}
	return fmt.Sprintf("standard: server and reference on CPU %d, load generator on CPU %d (taskset)", p.serverCPU, p.loadCPU)
}
