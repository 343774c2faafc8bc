package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// apiClient speaks to a running server with one token.
type apiClient struct {
	base, token string
}

func (c apiClient) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var env map[string]any
	_ = json.NewDecoder(res.Body).Decode(&env)
	return res.StatusCode, env
}

// login exchanges key for a token on the server at base.
func login(t *testing.T, base, key string) apiClient {
	t.Helper()
	c := apiClient{base: base}
	status, env := c.do(t, "POST", "/v1/auth/login", map[string]string{"api_key": key})
	if status != http.StatusOK {
		t.Fatalf("login: %d %v", status, env)
	}
	c.token = env["data"].(map[string]any)["access_token"].(string)
	return c
}

// storedItems checks an SQLite database's integrity and returns the ids of
// its items.
func storedItems(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	var integrity string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q, %v", integrity, err)
	}
	have := map[string]bool{}
	rows, err := db.Query("SELECT id FROM items")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return have
}

var firstKey = regexp.MustCompile(`sk_live_[a-z2-7]{32}`)

// TestBackupUnderWrites: server backup copies the SQLite database while the
// server takes a steady stream of creates. The copy passes SQLite's
// integrity check and holds every item whose create was acknowledged before
// the backup began; restore is refused while the server runs, and once it
// has stopped, restore puts the copy back and a server started on it serves
// every one of those items.
func TestBackupUnderWrites(t *testing.T) {
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "data", "app.db")
	flags := []string{"-database-url", dbURL, "-rate-limit-per-minute", "1000000", "-rate-limit-per-hour", "1000000"}
	s := startServe(t, flags, nil)
	key := firstKey.FindString(s.stderr.String())
	if key == "" {
		t.Fatalf("no first key printed:\n%s", s.stderr)
	}
	c := login(t, "http://"+s.addr, key)

	// Writers: each create acknowledged (201) is noted with the time the
	// answer came.
	var mu sync.Mutex
	type ack struct {
		id string
		at time.Time
	}
	var acks []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, env := c.do(t, "POST", "/v1/items", map[string]string{"name": fmt.Sprintf("w%d-%d", w, i)})
				if status != http.StatusCreated {
					continue
				}
				id := env["data"].(map[string]any)["id"].(string)
				mu.Lock()
				acks = append(acks, ack{id, time.Now()})
				mu.Unlock()
			}
		}()
	}
	// Let the writers get going, and the write-ahead log fill.
	for {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	dest := filepath.Join(dir, "backups", "app-backup.db")
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, stderr, err := runCmd(t, "backup", "-database-url", dbURL, dest)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, stderr)
	}
	// Writes go on after the copy, then stop.
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()

	var before []string
	after := 0
	for _, a := range acks {
		if a.at.Before(began) {
			before = append(before, a.id)
		} else {
			after++
		}
	}
	if len(before) < 200 || after == 0 {
		t.Fatalf("%d creates acknowledged before the backup, %d after: the test wants writes on both sides", len(before), after)
	}

	copyDB, err := sql.Open("sqlite", "file:"+dest+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	have := storedItems(t, copyDB)
	copyDB.Close()
	for _, id := range before {
		if !have[id] {
			t.Fatalf("item %s, acknowledged before the backup began, is not in the copy (%d of %d are)", id, len(have), len(before))
		}
	}
	if os.Getenv("SECRET_KEY") == "" {
		if _, err := os.Stat(dest + ".key"); err != nil {
			t.Errorf("the key file was not copied beside the backup: %v", err)
		}
	}

	if _, _, err := runCmd(t, "restore", "-database-url", dbURL, dest); !errors.Is(err, database.ErrInUse) {
		t.Fatalf("restore while the server runs: %v, want it refused (%v)", err, database.ErrInUse)
	}

	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	s.done <- nil // for the cleanup
	if _, stderr, err := runCmd(t, "restore", "-database-url", dbURL, dest); err != nil {
		t.Fatalf("restore: %v\n%s", err, stderr)
	}

	s2 := startServe(t, flags, nil)
	c2 := login(t, "http://"+s2.addr, key)
	for _, id := range before {
		if status, env := c2.do(t, "GET", "/v1/items/"+id, nil); status != http.StatusOK {
			t.Fatalf("GET %s on the restored database: %d %v", id, status, env)
		}
	}
	_, env := c2.do(t, "GET", "/v1/items?limit=1", nil)
	total := env["meta"].(map[string]any)["pagination"].(map[string]any)["total"].(float64)
	if int(total) != len(have) {
		t.Errorf("the restored server counts %v items, the copy holds %d", total, len(have))
	}
}

// TestBackupRefusals: what backup and restore refuse, each with an error
// that says why, and nothing written.
func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	sqliteURL := "sqlite:" + filepath.Join(dir, "app.db")
	existing := filepath.Join(t.TempDir(), "live.db")
	if _, _, err := runCmd(t, "migrate", "-database-url", "sqlite:"+existing); err != nil {
		t.Fatal(err)
	}
	pg := "postgres://postgres@127.0.0.1:5432/itemsvc?sslmode=disable"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"backup on PostgreSQL", []string{"backup", "-database-url", pg, filepath.Join(dir, "b.db")}, "pg_dump"},
		{"restore on PostgreSQL", []string{"restore", "-database-url", pg, filepath.Join(dir, "b.db")}, "pg_restore"},
		{"backup in memory", []string{"backup", "-database-url", "sqlite::memory:", filepath.Join(dir, "b.db")}, "in-memory"},
		{"backup without a path", []string{"backup", "-database-url", sqliteURL}, "exactly one PATH"},
		{"backup of no database", []string{"backup", "-database-url", sqliteURL, filepath.Join(dir, "b.db")}, "no database at"},
		{"backup into a missing folder", []string{"backup", "-database-url", "sqlite:" + existing, filepath.Join(dir, "nowhere", "b.db")}, "folder " + filepath.Join(dir, "nowhere") + " does not exist"},
		{"restore without a path", []string{"restore", "-database-url", sqliteURL}, "exactly one PATH"},
		{"restore of a missing copy", []string{"restore", "-database-url", sqliteURL, filepath.Join(dir, "missing.db")}, "no such file"},
		{"restore of something else", []string{"restore", "-database-url", sqliteURL, notDB}, "not an SQLite database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCmd(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			for _, f := range []string{filepath.Join(dir, "b.db"), filepath.Join(dir, "app.db")} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
}

// TestHealthcheck: healthcheck succeeds against a serving server and fails,
// within its timeout, against an address where none answers 200.
func TestHealthcheck(t *testing.T) {
	s := startServe(t, []string{"-database-url", testutil.DatabaseURL(t)}, nil)
	unhealthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unhealthy.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hanging.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(s.addr)
	for _, tc := range []struct {
		name, addr string
		ok         bool
	}{
		{"serving", s.addr, true},
		{"every interface means loopback", ":" + port, true},
		{"unhealthy", strings.TrimPrefix(unhealthy.URL, "http://"), false},
		{"hanging", strings.TrimPrefix(hanging.URL, "http://"), false},
		{"nobody listening", closed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := runCmd(t, "healthcheck", "-addr", tc.addr, "-timeout", "500ms", "-database-url", "sqlite::memory:")
			if (err == nil) != tc.ok {
				t.Fatalf("healthcheck %s: %v, want ok %v", tc.addr, err, tc.ok)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("healthcheck took %s, past its timeout", time.Since(start))
			}
		})
	}
}

// TestMigrateOnStartOff: a replica told not to migrate refuses to start on
// a database the migration job has not brought up to date, saying what to
// run, and starts once `server migrate` has run.
func TestMigrateOnStartOff(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	var stderr testutil.LockedBuffer
	err := serveWith(context.Background(), []string{"-addr", "127.0.0.1:0", "-database-url", dbURL, "-migrate-on-start=false"}, &stderr, serveHooks{})
	if err == nil || !strings.Contains(err.Error(), "server migrate") {
		t.Fatalf("serve on an unmigrated database: %v, want a refusal naming `server migrate`", err)
	}
	if _, stderr, err := runCmd(t, "migrate", "-database-url", dbURL); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	s := startServe(t, []string{"-database-url", dbURL, "-migrate-on-start=false"}, nil)
	res, err := http.Get("http://" + s.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %d", res.StatusCode)
	}
}

// TestRestorePathIsAFileName: restore and backup read PATH as the file so
// named, never as an SQLite URI. With a sound database at D/t.db, restoring
// "D/t.db?x" puts back the file "D/t.db?x" when it is a sound copy, and
// refuses it, leaving the live database as it was, when it is not; a backup
// to "D/b.db?x" writes that file.
func TestRestorePathIsAFileName(t *testing.T) {
	dir := t.TempDir()
	// newDB makes a migrated database holding one user, email.
	newDB := func(path, email string) {
		t.Helper()
		if _, stderr, err := runCmd(t, "users", "create", "-database-url", "sqlite:"+path, "--email", email, "--name", "N"); err != nil {
			t.Fatalf("users create in %s: %v\n%s", path, err, stderr)
		}
	}
	// emails lists the users of the database at path.
	emails := func(path string) []string {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var out []string
		rows, err := db.Query("SELECT email FROM users ORDER BY email")
		if err != nil {
			t.Fatalf("users of %s: %v", path, err)
		}
		defer rows.Close()
		for rows.Next() {
			var e string
			if err := rows.Scan(&e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	live := filepath.Join(dir, "live", "app.db")
	liveURL := "sqlite:" + live
	newDB(live, "live@example.com")
	other := filepath.Join(dir, "t.db")
	newDB(other, "other@example.com") // the file a URI reading of PATH would open
	literal := other + "?x"

	// Not a database: refused, the live one untouched.
	if err := os.WriteFile(literal, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, "restore", "-database-url", liveURL, literal); err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Fatalf("restore of %q (not a database): %v, want it refused", literal, err)
	}
	if got := emails(live); len(got) != 1 || got[0] != "live@example.com" {
		t.Fatalf("after a refused restore the live database holds %v", got)
	}

	// A backup to a name with ?x writes the file so named, a sound copy.
	source := filepath.Join(dir, "source.db")
	newDB(source, "literal@example.com")
	if _, stderr, err := runCmd(t, "backup", "-database-url", "sqlite:"+source, literal); err != nil {
		t.Fatalf("backup to %q: %v\n%s", literal, err, stderr)
	}
	// Restored: the file named "t.db?x" is what is installed, not t.db.
	if _, stderr, err := runCmd(t, "restore", "-database-url", liveURL, literal); err != nil {
		t.Fatalf("restore of %q: %v\n%s", literal, err, stderr)
	}
	if got := emails(live); len(got) != 1 || got[0] != "literal@example.com" {
		t.Fatalf("restoring %q installed a database with users %v, want the copy's literal@example.com", literal, got)
	}
	if got := emails(other); len(got) != 1 || got[0] != "other@example.com" {
		t.Errorf("%s changed: %v", other, got)
	}
}
