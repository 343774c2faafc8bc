package main

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestUsersAndKeysCommands: users list|create|set-role|disable|enable and
// keys list, one row a command line, on one database in order: what each
// prints on stdout, or the error it refuses with, and that a disabled
// user's key stops logging in while the last enabled admin stays one.
func TestUsersAndKeysCommands(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	db := "-database-url=" + dbURL
	out, _, err := runCmd(t, "keys", "create", db, "--email", "ops@example.com", "--name", "Ops", "--admin")
	if err != nil {
		t.Fatal(err)
	}
	opsKey := strings.TrimSpace(out)
	out, _, err = runCmd(t, "keys", "create", db, "--email", "Carol@Example.com", "--name", "Carol")
	if err != nil {
		t.Fatal(err)
	}
	carolKey := strings.TrimSpace(out)

	rows := []struct {
		name    string
		args    []string
		out     []string // lines of stdout must match these, in order (regexps)
		wantErr string   // the error must mention this
	}{
		{"create a user", []string{"users", "create", db, "--email", "Dan@Example.com", "--name", "Dan"}, []string{`^user_\w+$`}, ""},
		{"create an admin", []string{"users", "create", db, "--email", "eve@example.com", "--name", "Eve", "--role", "admin"}, []string{`^user_\w+$`}, ""},
		{"an email taken, whatever its case", []string{"users", "create", db, "--email", "DAN@example.com", "--name", "D"}, nil, "email: is already taken"},
		{"an unknown role", []string{"users", "create", db, "--email", "f@example.com", "--name", "F", "--role", "boss"}, nil, "role: must be one of: user, admin"},
		{"create without a name", []string{"users", "create", db, "--email", "g@example.com"}, nil, "--email and --name are required"},
		{"list every user", []string{"users", "list", db}, []string{
			`^user_\w+\tops@example.com\tadmin\tenabled\t"Ops"$`,
			`^user_\w+\tcarol@example.com\tuser\tenabled\t"Carol"$`,
			`^user_\w+\tdan@example.com\tuser\tenabled\t"Dan"$`,
			`^user_\w+\teve@example.com\tadmin\tenabled\t"Eve"$`}, ""},
		{"list admins", []string{"users", "list", db, "--role", "admin"}, []string{`\tops@example.com\t`, `\teve@example.com\t`}, ""},
		{"list by email prefix", []string{"users", "list", db, "--email", "CA"}, []string{`\tcarol@example.com\t`}, ""},
		{"list with a bad role", []string{"users", "list", db, "--role", "boss"}, nil, "role: must be one of"},
		{"list with a bad disabled", []string{"users", "list", db, "--disabled", "maybe"}, nil, "--disabled must be true or false"},
		{"disable a user", []string{"users", "disable", db, "carol@example.com"}, nil, ""},
		{"list disabled users", []string{"users", "list", db, "--disabled", "true"}, []string{`\tcarol@example.com\tuser\tdisabled\t`}, ""},
		{"keys of a disabled user", []string{"keys", "list", db, "--email", "carol@example.com"}, []string{`^key_\w+\tcarol@example.com\tsk_live_\w{4}\tuser-disabled\tread,write\t\S+\t\S+\t-$`}, ""},
		{"demote one of two admins", []string{"users", "set-role", db, "eve@example.com", "user"}, nil, ""},
		{"demote the last admin", []string{"users", "set-role", db, "ops@example.com", "user"}, nil, "role: the last enabled admin cannot be demoted or disabled"},
		{"disable the last admin", []string{"users", "disable", db, "ops@example.com"}, nil, "disabled: the last enabled admin cannot be demoted or disabled"},
		{"an unknown role to set", []string{"users", "set-role", db, "eve@example.com", "root"}, nil, "role: must be one of"},
		{"an unknown user", []string{"users", "disable", db, "nobody@example.com"}, nil, "user not found"},
		{"set-role without a role", []string{"users", "set-role", db, "eve@example.com"}, nil, "want a user (id or email) and a role"},
		{"an unknown subcommand", []string{"users", "delete", db, "eve@example.com"}, nil, `unknown subcommand "delete"`},
		{"no subcommand", []string{"users"}, nil, `users list`},
		{"enable the user again", []string{"users", "enable", db, "carol@example.com"}, nil, ""},
		{"every key", []string{"keys", "list", db}, []string{`\tops@example.com\t.*\tactive\t`, `\tcarol@example.com\t.*\tactive\t`}, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			out, stderr, err := runCmd(t, r.args...)
			if r.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), r.wantErr) {
					t.Fatalf("err %v (stderr %q), want one mentioning %q", err, stderr, r.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (stderr %q)", err, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				lines = nil
			}
			if len(lines) != len(r.out) {
				t.Fatalf("stdout has %d lines, want %d:\n%s", len(lines), len(r.out), out)
			}
			for i, re := range r.out {
				if !regexp.MustCompile(re).MatchString(lines[i]) {
					t.Errorf("line %d %q does not match %s", i+1, lines[i], re)
				}
			}
		})
	}

	ctx := context.Background()
	d, err := database.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	svc := newTestService(t, d)
	if _, err := svc.Login(ctx, carolKey); err != nil {
		t.Fatalf("login of an enabled user: %v", err)
	}
	if _, _, err := runCmd(t, "users", "disable", db, "carol@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Login(ctx, carolKey); !errors.Is(err, service.ErrInvalidAPIKey) {
		t.Fatalf("login of a disabled user: %v, want INVALID_API_KEY", err)
	}
	if _, err := svc.Login(ctx, opsKey); err != nil {
		t.Fatalf("login of the last admin: %v", err)
	}
}
