package graph_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

const backupFields = `name size createdAt downloadPath`

// TestBackupsGraphQL makes, lists and describes backups through GraphQL,
// on the service functions REST's routes call: the same rules and codes,
// and names that lead out of the folder refused before the disk is read.
func TestBackupsGraphQL(t *testing.T) {
	env := testutil.New(t)
	if testutil.OnPostgres() {
		for _, q := range []string{`mutation { createBackup { name } }`, `{ backups { name } }`, `{ backup(name: "x.db") { name } }`} {
			if r := testutil.GQL(t, env, env.Admin.Token, q, nil); r.Code() != "NOT_SUPPORTED" || r.Errors[0].Extensions["reason"] != "postgres" {
				t.Errorf("%s on PostgreSQL: %s", q, r.Raw)
			}
			if r := testutil.GQL(t, env, env.Alice.Token, q, nil); r.Code() != "PERMISSION_DENIED" {
				t.Errorf("%s as a user: %s", q, r.Raw)
			}
		}
		return
	}
	r := testutil.GQL(t, env, env.Admin.Token, `mutation { createBackup { `+backupFields+` } }`, nil).OK(t)
	made := r.At(t, "createBackup").(map[string]any)
	name, _ := made["name"].(string)
	if made["downloadPath"] != "/v1/backups/"+name+"/download" || made["size"].(float64) <= 0 {
		t.Fatalf("createBackup: %s", r.Raw)
	}
	rest := env.Do(testutil.Request{Method: "GET", Path: "/v1/backups/" + name, Token: env.Admin.Token})
	var viaREST map[string]any
	rest.Data(t, &viaREST)
	for rk, gk := range map[string]string{"name": "name", "size": "size", "created_at": "createdAt", "download_path": "downloadPath"} {
		if viaREST[rk] != made[gk] {
			t.Errorf("%s: REST %v, GraphQL %v", rk, viaREST[rk], made[gk])
		}
	}
	r = testutil.GQL(t, env, env.Admin.Token, `{ backups { `+backupFields+` } }`, nil).OK(t)
	if list := r.At(t, "backups").([]any); len(list) != 1 || list[0].(map[string]any)["name"] != name {
		t.Errorf("backups: %s", r.Raw)
	}
	r = testutil.GQL(t, env, env.Admin.Token, `query($n: String!) { backup(name: $n) { name } }`, map[string]any{"n": name}).OK(t)
	if r.At(t, "backup", "name") != name {
		t.Errorf("backup(name): %s", r.Raw)
	}

	_, dbPath, _ := config.ParseDatabaseURL(env.App.Config.DatabaseURL)
	if err := os.Symlink(dbPath, filepath.Join(filepath.Dir(dbPath), "backups", "link.db")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, code string }{
		{"../test.db", "VALIDATION_ERROR"},
		{"backups/../../test.db", "VALIDATION_ERROR"},
		{"/etc/passwd", "VALIDATION_ERROR"},
		{"..", "VALIDATION_ERROR"},
		{`..\test.db`, "VALIDATION_ERROR"},
		{"", "VALIDATION_ERROR"},
		{name + ".key", "VALIDATION_ERROR"},
		{"link.db", "NOT_FOUND"},
		{"backup-20000101T000000.000Z.db", "NOT_FOUND"},
	} {
		r := testutil.GQL(t, env, env.Admin.Token, `query($n: String!) { backup(name: $n) { name } }`, map[string]any{"n": tc.name})
		if r.Code() != tc.code {
			t.Errorf("backup(name: %q): %s, want %s", tc.name, r.Raw, tc.code)
		}
		if tc.code == "VALIDATION_ERROR" && r.Errors[0].Extensions["field"] != "name" {
			t.Errorf("backup(name: %q) names %v, want name", tc.name, r.Errors[0].Extensions["field"])
		}
	}
	for _, q := range []string{`mutation { createBackup { name } }`, `{ backups { name } }`, `query($n: String!) { backup(name: $n) { name } }`} {
		if r := testutil.GQL(t, env, env.Alice.Token, q, map[string]any{"n": name}); r.Code() != "PERMISSION_DENIED" {
			t.Errorf("%s as a user: %s", q, r.Raw)
		}
	}
}
