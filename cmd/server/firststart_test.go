package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// Markers of what a first start printed (serve.go).
const (
	firstStartKey  = "First start: created the admin user"
	firstStartDone = "the database was already set up"
)

// TestFirstStartOnce: however many servers start together on an empty
// database, one creates the admin and prints its key; the others say the
// database was already set up. Two processes (this test binary, run again
// as a server: firstStartChild) start at once on one database: a SQLite
// file, or a PostgreSQL schema when TEST_DATABASE_URL is set.
func TestFirstStartOnce(t *testing.T) {
	if os.Getenv("ITEMSVC_FIRST_START_CHILD") != "" {
		firstStartChild(t)
		return
	}
	dbURL := testutil.DatabaseURL(t)
	const servers = 2
	outs := make([]bytes.Buffer, servers)
	cmds := make([]*exec.Cmd, servers)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestFirstStartOnce$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "ITEMSVC_FIRST_START_CHILD=1", "DATABASE_URL="+dbURL, "ADDR=127.0.0.1:0",
			"PLAYGROUND=false", "LOG_LEVEL=info")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	keys, done := 0, 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("server %d: %v\n%s", i, err, outs[i].String())
		}
		out := outs[i].String()
		keys += strings.Count(out, firstStartKey)
		done += strings.Count(out, firstStartDone)
		if testing.Verbose() {
			t.Logf("server %d:\n%s", i, out)
		}
	}
	if keys != 1 || done != servers-1 {
		t.Fatalf("%d servers printed a key and %d said the database was set up; want 1 and %d", keys, done, servers-1)
	}
	// The admin and its key are recorded once, as the system's doing.
	d, err := database.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	records, err := d.Client.AuditEvent.Query().All(testutil.SystemContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range records {
		if e.ActorID != nil {
			t.Errorf("%s by %s; want the system", e.Action, *e.ActorID)
		}
		actions = append(actions, e.Action)
	}
	if slices.Sort(actions); !slices.Equal(actions, []string{"key.created", "user.created"}) {
		t.Errorf("audit records %v, want key.created and user.created", actions)
	}
}

// firstStartChild runs serve until it has said what its first start did,
// then stops it.
func firstStartChild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &watchWriter{out: os.Stderr, cancel: cancel}
	if err := run(ctx, []string{"serve"}, os.Stdout, w); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// watchWriter passes writes on to out and cancels once one holds a marker
// of the first start.
type watchWriter struct {
	mu     sync.Mutex
	out    *os.File
	cancel context.CancelFunc
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := string(p); strings.Contains(s, firstStartKey) || strings.Contains(s, firstStartDone) {
		w.cancel()
	}
	return w.out.Write(p)
}
