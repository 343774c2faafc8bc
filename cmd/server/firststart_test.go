package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
// database, one creates the admin and says so; the others say the database
// was already set up. Two processes (this test binary, run again as a
// server: firstStartChild) start at once on one database: a SQLite file, or
// a PostgreSQL schema when TEST_DATABASE_URL is set. Without a declared
// admin, the one prints the key of admin@localhost; with one
// (BOOTSTRAP_ADMIN_EMAIL, BOOTSTRAP_ADMIN_KEY_FILE, as a cluster's Secret
// declares it), exactly one admin of that email is made, its key is the
// file's and logs in, and no key is printed.
func TestFirstStartOnce(t *testing.T) {
	if os.Getenv("ITEMSVC_FIRST_START_CHILD") != "" {
		firstStartChild(t)
		return
	}
	declaredKey := "sk_live_" + strings.Repeat("k2", 16)
	keyFile := filepath.Join(t.TempDir(), "admin-key")
	if err := os.WriteFile(keyFile, []byte(declaredKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		env       []string
		email     string
		printsKey bool
	}{
		{"printed key", nil, "admin@localhost", true},
		{"declared admin", []string{"BOOTSTRAP_ADMIN_EMAIL=Ops@Example.com", "BOOTSTRAP_ADMIN_KEY_FILE=" + keyFile}, "ops@example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbURL := testutil.DatabaseURL(t)
			outs := startTogether(t, 2, append(tc.env, "DATABASE_URL="+dbURL))
			keys, printed, done := 0, 0, 0
			for _, out := range outs {
				keys += strings.Count(out, firstStartKey)
				printed += len(firstKey.FindAllString(out, -1))
				done += strings.Count(out, firstStartDone)
			}
			wantPrinted := 0
			if tc.printsKey {
				wantPrinted = 1
			}
			if keys != 1 || done != len(outs)-1 || printed != wantPrinted {
				t.Fatalf("%d servers said they created the admin, %d that the database was set up, %d keys printed; want 1, %d, %d\n%s",
					keys, done, printed, len(outs)-1, wantPrinted, strings.Join(outs, "\n---\n"))
			}
			// The admin and its key are recorded once, as the system's doing.
			d, err := database.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx := testutil.SystemContext(t)
			users, err := d.Client.User.Query().All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(users) != 1 || users[0].Email != tc.email || users[0].Role != "admin" {
				t.Fatalf("users %v, want one admin %s", users, tc.email)
			}
			records, err := d.Client.AuditEvent.Query().All(ctx)
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
			if !tc.printsKey {
				if _, err := newTestService(t, d).Login(context.Background(), declaredKey); err != nil {
					t.Errorf("login with the declared key: %v", err)
				}
			}
		})
	}
}

// startTogether starts n servers at once with env (each this test binary
// run as firstStartChild) and returns what each printed once it has said
// what its first start did.
func startTogether(t *testing.T, n int, env []string) []string {
	t.Helper()
	outs := make([]bytes.Buffer, n)
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestFirstStartOnce$", "-test.count=1")
		cmds[i].Env = append(append(os.Environ(), "ITEMSVC_FIRST_START_CHILD=1", "ADDR=127.0.0.1:0",
			"PLAYGROUND=false", "LOG_LEVEL=info"), env...)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, n)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("server %d: %v\n%s", i, err, outs[i].String())
		}
		out[i] = outs[i].String()
		if testing.Verbose() {
			t.Logf("server %d:\n%s", i, out[i])
		}
	}
	return out
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
