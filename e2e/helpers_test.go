package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// requireE2E skips t unless E2E=1 (make e2e, CI). Then each path of need
// (relative to e2e/) must exist: a missing one fails t, saying how to get it.
func requireE2E(t *testing.T, need ...string) {
	t.Helper()
	if os.Getenv("E2E") != "1" {
		t.Skip("end-to-end test: run with E2E=1 (make e2e)")
	}
	for _, path := range need {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s is missing: (cd e2e && npm ci) for node_modules; apt-get install chromium for chromium", path)
		}
	}
}

// chromium is the browser the tests drive: $CHROMIUM, or Debian's.
func chromium() string {
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path
	}
	return "/usr/bin/chromium"
}

// runBrowserTest runs node on script (in e2e/) with vars added to its
// environment, and OUTPUT_DIR and CHROMIUM set, after taking the screenshots
// shots out of test-output/; it fails t unless the script succeeds and
// leaves each of them there again.
func runBrowserTest(t *testing.T, script string, shots []string, vars ...string) {
	t.Helper()
	out, err := filepath.Abs("../test-output")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shots {
		_ = os.Remove(filepath.Join(out, s))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Env = append(append(os.Environ(), vars...), "OUTPUT_DIR="+out, "CHROMIUM="+chromium())
	output, err := cmd.CombinedOutput()
	t.Logf("node %s:\n%s", script, output)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
	for _, s := range shots {
		if st, err := os.Stat(filepath.Join(out, s)); err != nil || st.Size() < 10_000 {
			t.Errorf("no screenshot at %s (%v)", filepath.Join(out, s), err)
		}
	}
}
