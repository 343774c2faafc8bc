package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestKillDuringBatches: a server killed (SIGKILL) while creates share its
// SQLite commits (group commit) loses none whose 201 was sent. The server
// is this test binary run again (killChild) on a database file; writers on
// many connections create items until it is killed in the middle of their
// batches; the database, opened again, holds every acknowledged item.
func TestKillDuringBatches(t *testing.T) {
	if os.Getenv("ITEMSVC_KILL_CHILD") != "" {
		killChild(t)
		return
	}
	path := filepath.Join(t.TempDir(), "app.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringBatches$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ITEMSVC_KILL_CHILD=1", "DATABASE_URL=sqlite:"+path,
		"RATE_LIMIT_PER_MINUTE=10000000", "RATE_LIMIT_PER_HOUR=10000000", "PLAYGROUND=false", "LOG_LEVEL=warn")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// The child prints the first key, then the address it listens on.
	var key, addr string
	lines := bufio.NewScanner(out)
	for addr == "" && lines.Scan() {
		line := lines.Text()
		if k := firstKey.FindString(line); k != "" {
			key = k
		}
		if a, ok := strings.CutPrefix(line, "ADDR "); ok {
			addr = a
		}
	}
	if key == "" || addr == "" {
		t.Fatalf("the server printed no key (%q) or address (%q)", key, addr)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := "http://" + addr
	c := login(t, base, key)

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, env := c.do(t, "POST", "/v1/items", map[string]string{"name": fmt.Sprintf("w%d-%d", w, i)})
				if status == 0 {
					return // the server is gone
				}
				if status != http.StatusCreated {
					continue
				}
				mu.Lock()
				acked = append(acked, env["data"].(map[string]any)["id"].(string))
				mu.Unlock()
			}
		})
	}
	batched := func() (commits, txs float64) {
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		fams := testutil.ParseMetrics(t, body)
		return fams.Value("itemsvc_sqlite_commits_total", nil), fams.Value("itemsvc_sqlite_committed_transactions_total", nil)
	}
	// Kill once commits have held several creates each for a while.
	testutil.Eventually(t, 60*time.Second, func() bool {
		commits, txs := batched()
		return txs >= 500 && txs >= commits+100
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = cmd.Wait()
	close(stop)
	wg.Wait()

	d, err := database.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	have := storedItems(t, d.SQL)
	for _, id := range acked {
		if !have[id] {
			t.Fatalf("item %s was acknowledged (201) but is not in the database after the kill (%d acknowledged, %d stored)", id, len(acked), len(have))
		}
	}
	t.Logf("%d creates acknowledged before the kill, %d items stored", len(acked), len(have))
}

// killChild serves until it is killed, printing the address it listens on
// after the first start's output.
func killChild(t *testing.T) {
	hooks := serveHooks{listening: func(a string) { fmt.Fprintln(os.Stdout, "ADDR "+a) }}
	if err := serveWith(context.Background(), []string{"-addr", "127.0.0.1:0"}, os.Stdout, hooks); err != nil {
		t.Fatalf("serve: %v", err)
	}
}
