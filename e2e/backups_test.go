package e2e_test

import (
	"database/sql"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestPagesInBrowserBackups has chromium use the playground's Backups and
// Health pages (backups.test.mjs): an admin makes a backup and downloads
// it, and the file the browser saved opens here as a sound SQLite
// database holding the server's items; the Health page shows the version,
// uptime, database and charts read from /metrics. Its name starts as
// TestPagesInBrowser's, so that make e2e runs it.
func TestPagesInBrowserBackups(t *testing.T) {
	requireE2E(t, chromium(), "node_modules/playwright-core")
	// Backups are SQLite's (rest: TestBackupsOnPostgres holds PostgreSQL's
	// refusal): this test runs on SQLite even where the others run on
	// PostgreSQL (CI), so that CI takes a backup in the browser too.
	t.Setenv("TEST_DATABASE_URL", "")
	t.Setenv("REQUIRE_POSTGRES", "")
	env := testutil.New(t)
	for _, name := range []string{"Lamp", "Desk", "Chair"} {
		env.CreateItem(env.Alice, name)
	}
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	out, err := filepath.Abs("../test-output")
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(out, "backup-download.db")
	_ = os.Remove(saved)
	runBrowserTest(t, "backups.test.mjs", []string{"admin-backups.png", "admin-health.png"},
		"BASE_URL="+srv.URL,
		"API_KEY="+env.Admin.Key,
		"USER_API_KEY="+env.Alice.Key,
	)

	db, err := sql.Open("sqlite", "file:"+saved+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("the downloaded backup: integrity_check %q, %v", check, err)
	}
	var items int
	if err := db.QueryRow("SELECT count(*) FROM items").Scan(&items); err != nil || items != 3 {
		t.Fatalf("the downloaded backup holds %d items (%v), want 3", items, err)
	}
}
