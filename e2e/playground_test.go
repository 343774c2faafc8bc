package e2e_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestPlaygroundInBrowser runs the server on a free port with seeded items
// and has chromium use the playground: paste the admin's token, run a query,
// see every user's items. It runs with E2E=1 (make e2e, CI), where a
// missing chromium or node_modules fails it; otherwise it is skipped.
func TestPlaygroundInBrowser(t *testing.T) {
	if os.Getenv("E2E") != "1" {
		t.Skip("browser test: run with E2E=1 (make e2e)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	for _, need := range []string{chromium, "node_modules/playwright-core"} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("%s is missing: apt-get install chromium; (cd e2e && npm ci)", need)
		}
	}

	env := testutil.New(t)
	names := []string{"Alice's lamp", "Alice's desk", "Bob's chair"}
	env.CreateItem(env.Alice, names[0])
	env.CreateItem(env.Alice, names[1])
	env.CreateItem(env.Bob, names[2])
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	out, err := filepath.Abs("../test-output")
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(out, "playground.png")
	_ = os.Remove(shot)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "playground.test.mjs")
	cmd.Env = append(os.Environ(),
		"BASE_URL="+srv.URL,
		"TOKEN="+env.Admin.Token,
		"EXPECT="+strings.Join(names, ","),
		"OUTPUT_DIR="+out,
		"CHROMIUM="+chromium,
	)
	output, err := cmd.CombinedOutput()
	t.Logf("node playground.test.mjs:\n%s", output)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("no screenshot at %s (%v)", shot, err)
	}
}
