package e2e_test

import (
	"os"
	"testing"
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
