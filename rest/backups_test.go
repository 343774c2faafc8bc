package rest_test

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// backupDir is where env's server keeps its backups by default: backups/
// beside its SQLite database.
func backupDir(t *testing.T, env *testutil.Env) string {
	t.Helper()
	_, path, err := config.ParseDatabaseURL(env.App.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(path), "backups")
}

// backupName is the name in a backup's envelope.
func backupName(t *testing.T, r *testutil.Response) string {
	t.Helper()
	var b struct{ Name string }
	r.Data(t, &b)
	return b.Name
}

// integrity opens an SQLite file read-only and returns its integrity check
// and how many items it holds.
func integrity(t *testing.T, path string) (string, int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	var items int
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM items").Scan(&items); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return check, items
}

// TestBackups makes, lists, describes and downloads backups of the SQLite
// database as an admin, and each is refused to anyone else; every make and
// download is in the audit trail.
func TestBackups(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("SQLite's backups; TestBackupsOnPostgres holds PostgreSQL's refusal")
	}
	env := testutil.New(t)
	dir := backupDir(t, env)
	env.CreateItem(env.Alice, "Kept in the backup")
	audit := newAuditLog(t, env)
	admin, alice := env.Admin.Token, env.Alice.Token

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "no folder yet: an empty list", Method: "GET", Path: "/v1/backups", Token: admin, Status: 200, Contains: []string{`"data":[]`}},
		{Name: "a user may not make one", Method: "POST", Path: "/v1/backups", Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a user may not list them", Method: "GET", Path: "/v1/backups", Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "without a token", Method: "POST", Path: "/v1/backups", Status: 401, Code: "UNAUTHORIZED"},
	})
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("a refused backup made the folder %s", dir)
	}

	res := env.Do(testutil.Request{Method: "POST", Path: "/v1/backups", Token: admin})
	if res.Status != http.StatusCreated {
		t.Fatalf("POST /v1/backups: %d %s", res.Status, res.Body)
	}
	name := backupName(t, res)
	if loc := res.Header.Get("Location"); loc != "/v1/backups/"+name {
		t.Errorf("Location = %q, want /v1/backups/%s", loc, name)
	}
	if check, items := integrity(t, filepath.Join(dir, name)); check != "ok" || items != 1 {
		t.Errorf("the backup: integrity %q, %d items; want ok, 1", check, items)
	}
	if _, err := os.Stat(filepath.Join(dir, name+".key")); err != nil {
		t.Errorf("the key file was not copied beside the backup: %v", err)
	}

	testutil.Run(t, env, []testutil.Scenario{
		{Name: "listed, with its download path", Method: "GET", Path: "/v1/backups", Token: admin, Status: 200,
			Contains: []string{`"name":"` + name + `"`, `"download_path":"/v1/backups/` + name + `/download"`}, NotContains: []string{".key"}},
		{Name: "described", Method: "GET", Path: "/v1/backups/" + name, Token: admin, Status: 200, Contains: []string{`"name":"` + name + `"`}},
		{Name: "a user may not describe it", Method: "GET", Path: "/v1/backups/" + name, Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "a user may not download it", Method: "GET", Path: "/v1/backups/" + name + "/download", Token: alice, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "an unknown backup", Method: "GET", Path: "/v1/backups/backup-20000101T000000.000Z.db", Token: admin, Status: 404, Code: "NOT_FOUND"},
		{Name: "its key file is no backup", Method: "GET", Path: "/v1/backups/" + name + ".key/download", Token: admin, Status: 400, Code: "VALIDATION_ERROR"},
	})

	res = env.Do(testutil.Request{Method: "GET", Path: "/v1/backups/" + name + "/download", Token: admin})
	if res.Status != http.StatusOK {
		t.Fatalf("download: %d %s", res.Status, res.Body)
	}
	for k, want := range map[string]string{
		"Content-Type":        "application/octet-stream",
		"Content-Disposition": `attachment; filename="` + name + `"`,
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	got := filepath.Join(t.TempDir(), "downloaded.db")
	if err := os.WriteFile(got, res.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	if check, items := integrity(t, got); check != "ok" || items != 1 {
		t.Errorf("the download: integrity %q, %d items; want ok, 1", check, items)
	}

	var actions []string
	for _, e := range audit.fresh() {
		if e.TargetID != name || e.ActorID == nil || *e.ActorID != env.Admin.UserID {
			t.Errorf("audit record %s of %s by %v, want %s by the admin", e.Action, e.TargetID, e.ActorID, name)
		}
		actions = append(actions, e.Action)
	}
	slices.Sort(actions)
	if want := []string{"backup.created", "backup.downloaded"}; !slices.Equal(actions, want) {
		t.Errorf("audit actions %v, want %v (refusals and reads record nothing)", actions, want)
	}
}

// TestBackupNames holds every name that is not a plain file of the backup
// folder away from the disk: a path out of the folder, however it is
// spelled, a hidden or temporary file, a key file, a symbolic link to the
// database itself. Each is refused (400, or 404 when the router finds no
// route or the name no file) and no response carries the database.
// GraphQL's backup(name) hands the service the names a URL path cannot
// carry (graph, TestBackupsGraphQL).
func TestBackupNames(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("SQLite's backups")
	}
	env := testutil.New(t)
	dir := backupDir(t, env)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, dbPath, _ := config.ParseDatabaseURL(env.App.Config.DatabaseURL)
	if err := os.Symlink(dbPath, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".hidden.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"parent", "..", 400},
		{"dot", ".", 400},
		{"the database beside the folder", "..%2Ftest.db", 404}, // the router reads the decoded path: no route
		{"encoded dots", "%2E%2E%2Ftest.db", 404},
		{"double-encoded", "..%252Ftest.db", 400},
		{"absolute", "%2Fetc%2Fpasswd", 404},
		{"backslash", "..%5Ctest.db", 400},
		{"nul", "test.db%00", 400},
		{"hidden file", ".hidden.db", 400},
		{"temporary copy", ".backup-x.db.tmp-1", 400},
		{"not a .db", "notes.txt", 400},
		{"key file", "test.db.key", 400},
		{"too long", strings.Repeat("a", 300) + ".db", 400},
		{"symbolic link to the database", "link.db", 404},
		{"unencoded parent", "../test.db", 404},
		{"unencoded absolute", "/etc/passwd", 404},
	} {
		for _, suffix := range []string{"", "/download"} {
			t.Run(tc.name+suffix, func(t *testing.T) {
				res := env.Do(testutil.Request{Method: "GET", Path: "/v1/backups/" + tc.path + suffix, Token: env.Admin.Token})
				if res.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
				}
				if strings.Contains(string(res.Body), "SQLite format") || strings.Contains(string(res.Body), "root:") {
					t.Fatalf("the response carries a file: %.80q", res.Body)
				}
			})
		}
	}
	res := env.Do(testutil.Request{Method: "GET", Path: "/v1/backups", Token: env.Admin.Token})
	if res.Status != http.StatusOK || string(res.Body) == "" || strings.Contains(string(res.Body), `"name"`) {
		t.Errorf("the list shows a link, hidden or other file: %s", res.Body)
	}
}

// TestBackupRetention keeps the newest BACKUP_KEEP of the backups the API
// made, removing the older ones with their key files (each recorded), and
// never a file the API did not make.
func TestBackupRetention(t *testing.T) {
	if testutil.OnPostgres() {
		t.Skip("SQLite's backups")
	}
	keep := t.TempDir()
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.BackupKeep = 2; c.BackupDir = keep }))
	nightly := filepath.Join(keep, "nightly.db")
	if err := os.WriteFile(nightly, []byte("a server backup of an operator's"), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := newAuditLog(t, env)
	var names []string
	for range 3 {
		res := env.Do(testutil.Request{Method: "POST", Path: "/v1/backups", Token: env.Admin.Token})
		if res.Status != http.StatusCreated {
			t.Fatalf("POST: %d %s", res.Status, res.Body)
		}
		names = append(names, backupName(t, res))
	}
	entries, err := os.ReadDir(keep)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{names[1], names[1] + ".key", names[2], names[2] + ".key", "nightly.db"}
	if !slices.Equal(left, want) {
		t.Errorf("the folder holds %v, want %v", left, want)
	}
	res := env.Do(testutil.Request{Method: "GET", Path: "/v1/backups", Token: env.Admin.Token})
	var listed []struct{ Name string }
	res.Data(t, &listed)
	if len(listed) != 3 || listed[0].Name != names[2] {
		t.Errorf("listed %v, want the two kept, newest first, and nightly.db", listed)
	}
	deleted := 0
	for _, e := range audit.fresh() {
		if e.Action == "backup.deleted" {
			deleted++
			if e.TargetID != names[0] {
				t.Errorf("backup.deleted of %s, want %s", e.TargetID, names[0])
			}
		}
	}
	if deleted != 1 {
		t.Errorf("%d backup.deleted records, want 1", deleted)
	}
}

// TestBackupsOnPostgres: PostgreSQL's backups are pg_dump's; every backup
// route says so with its code, to an admin. A user is refused first.
func TestBackupsOnPostgres(t *testing.T) {
	if !testutil.OnPostgres() {
		t.Skip("PostgreSQL's refusal; TEST_DATABASE_URL is not set")
	}
	env := testutil.New(t)
	var rows []testutil.Scenario
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/backups"},
		{"GET", "/v1/backups"},
		{"GET", "/v1/backups/backup-20000101T000000.000Z.db"},
		{"GET", "/v1/backups/backup-20000101T000000.000Z.db/download"},
	} {
		rows = append(rows,
			testutil.Scenario{Name: r.method + " " + r.path, Method: r.method, Path: r.path, Token: env.Admin.Token,
				Status: 501, Code: "NOT_SUPPORTED", Contains: []string{"pg_dump", `"reason":"postgres"`}},
			testutil.Scenario{Name: r.method + " " + r.path + " as a user", Method: r.method, Path: r.path, Token: env.Alice.Token,
				Status: 403, Code: "PERMISSION_DENIED"})
	}
	testutil.Run(t, env, rows)
}
