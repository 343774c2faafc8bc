package rest_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestDatabaseUnavailable: with the database gone, requests that need it
// answer 503 UNAVAILABLE, not 500.
func TestDatabaseUnavailable(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "x")
	if err := env.App.DB.SQL.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "list", Method: "GET", Path: "/v1/items", Token: env.Alice.Token, Status: 503, Code: "UNAVAILABLE"},
		{Name: "get", Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token, Status: 503, Code: "UNAVAILABLE"},
		{Name: "create", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: `{"name":"y"}`, Status: 503, Code: "UNAVAILABLE"},
		{Name: "login", Method: "POST", Path: "/v1/auth/login", Body: map[string]any{"api_key": env.Bob.Key}, Status: 503, Code: "UNAVAILABLE"},
	})
}

// TestDatabaseFull: a database that answers but cannot take writes (here
// SQLite's page limit, as a full disk) makes writes 503 UNAVAILABLE with
// reason storage and Retry-After, reads keep working, and readiness fails
// until a write succeeds again.
func TestDatabaseFull(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("fills SQLite through its page limit; PostgreSQL's disk-full and read-only codes are mapped by the same apperr.IsStorage")
	}
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "x")
	db := env.App.DB.SQL
	// One connection, so that the page limit set on it holds for every
	// statement the server runs.
	db.SetMaxOpenConns(1)
	for db.Stats().OpenConnections > 1 {
		runtime.Gosched()
	}
	limit := func(pages string) {
		if _, err := db.Exec("PRAGMA max_page_count = " + pages); err != nil {
			t.Fatal(err)
		}
	}
	var pages int
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	limit(strconv.Itoa(pages))
	big := strings.Repeat("x", 5000)
	full := []testutil.Scenario{
		{Name: "create", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "y", "description": big},
			Status: 503, Code: "UNAVAILABLE", Contains: []string{`"reason":"storage"`}, HeaderIs: map[string]string{"Retry-After": "5"}},
		{Name: "read still works", Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token, Status: 200},
		{Name: "not ready", Method: "GET", Path: "/readyz", Status: 503, Code: "UNAVAILABLE", Contains: []string{`"reason":"storage"`}},
	}
	for i := range 50 { // fill the free pages of the file first
		if res := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "y", "description": big}}); res.Status == 503 {
			break
		} else if i == 49 {
			t.Fatalf("the page limit never filled: %d %s", res.Status, res.Body)
		}
	}
	testutil.Run(t, env, full)

	limit("1073741823")
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "ready again", Method: "GET", Path: "/readyz", Status: 200},
		{Name: "writes again", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "z"}, Status: 201},
	})
}

// TestDiskFull puts the database on a small tmpfs and fills it: writes get
// 503 UNAVAILABLE (reason storage), reads go on, /readyz says not ready;
// once space is freed, readiness and writes come back and the database is
// intact. It needs to mount a tmpfs (root on Linux) and is skipped elsewhere.
func TestDiskFull(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("the database is PostgreSQL's, not on a disk this test controls")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.DatabaseURL = "sqlite:" + filepath.Join(dir, "app.db") }))
	id := env.CreateItem(env.Alice, "before the disk filled")

	// Fill what is left of the disk.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	big := strings.Repeat("x", 5000)
	var status int
	for range 200 { // the page cache and WAL take what fits, then writes fail
		res := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "y", "description": big}})
		if status = res.Status; status != http.StatusCreated {
			break
		}
	}
	if status != http.StatusServiceUnavailable {
		t.Fatalf("a write on a full disk answered %d, want 503", status)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "write refused", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "y", "description": big},
			Status: 503, Code: "UNAVAILABLE", Contains: []string{`"reason":"storage"`}, HeaderIs: map[string]string{"Retry-After": "5"}},
		{Name: "read served", Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token, Status: 200},
		{Name: "not ready", Method: "GET", Path: "/readyz", Status: 503, Code: "UNAVAILABLE"},
	})

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, env, []testutil.Scenario{
		{Name: "ready again", Method: "GET", Path: "/readyz", Status: 200},
		{Name: "writes again", Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "after"}, Status: 201},
	})
	var check string
	if err := env.App.DB.SQL.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
}
