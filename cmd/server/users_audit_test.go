package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestUsersCommandsAudit: users create, set-role, disable and enable each
// write one audit record as the system (no actor, no request id), with
// the fields they changed, and keys create records the user it creates or
// promotes beside the key; a refused command writes none.
func TestUsersCommandsAudit(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	db := "-database-url=" + dbURL
	if _, _, err := runCmd(t, "keys", "create", db, "--email", "ops@example.com", "--name", "Ops", "--admin"); err != nil {
		t.Fatal(err)
	}
	d, err := database.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sys := testutil.SystemContext(t)
	seen := map[string]bool{}
	// The admin's key made above was recorded (key.created): not a row's.
	setup, err := d.Client.AuditEvent.Query().All(sys)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range setup {
		seen[e.ID] = true
	}
	rows := []struct {
		name  string
		args  []string
		fails bool
		// want are the records written, sorted: the action and its
		// changes as JSON, or the action alone where the changes hold
		// ids made by the command.
		want []string
	}{
		{"create a user", []string{"users", "create", db, "--email", "dan@example.com", "--name", "Dan"}, false,
			[]string{`user.created {"disabled":[null,false],"email":[null,"dan@example.com"],"name":[null,"Dan"],"role":[null,"user"]}`}},
		{"make them an admin", []string{"users", "set-role", db, "dan@example.com", "admin"}, false,
			[]string{`user.updated {"role":["user","admin"]}`}},
		{"disable them", []string{"users", "disable", db, "dan@example.com"}, false,
			[]string{`user.updated {"disabled":[false,true]}`}},
		{"enable them", []string{"users", "enable", db, "dan@example.com"}, false,
			[]string{`user.updated {"disabled":[true,false]}`}},
		{"a key for a new user creates them", []string{"keys", "create", db, "--email", "erin@example.com", "--name", "Erin"}, false,
			[]string{"key.created", `user.created {"disabled":[null,false],"email":[null,"erin@example.com"],"name":[null,"Erin"],"role":[null,"user"]}`}},
		{"an admin key promotes its user", []string{"keys", "create", db, "--email", "erin@example.com", "--admin"}, false,
			[]string{"key.created", `user.updated {"role":["user","admin"]}`}},
		{"an email taken", []string{"users", "create", db, "--email", "DAN@example.com", "--name", "D"}, true, nil},
		{"an unknown role", []string{"users", "set-role", db, "dan@example.com", "root"}, true, nil},
		{"an unknown user", []string{"users", "disable", db, "nobody@example.com"}, true, nil},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, r.args...)
			if (err != nil) != r.fails {
				t.Fatalf("err %v (stderr %q), want failure %v", err, stderr, r.fails)
			}
			all, err := d.Client.AuditEvent.Query().Order(auditevent.ByCreatedAt()).All(sys)
			if err != nil {
				t.Fatal(err)
			}
			var fresh []string
			for _, e := range all {
				if seen[e.ID] {
					continue
				}
				seen[e.ID] = true
				if e.ActorID != nil || e.RequestID != nil {
					t.Errorf("%s: actor %v, request id %v; want the system's nulls", e.Action, e.ActorID, e.RequestID)
				}
				b, err := json.Marshal(e.Changes)
				if err != nil {
					t.Fatal(err)
				}
				fresh = append(fresh, e.Action+" "+string(b))
			}
			slices.Sort(fresh)
			ok := len(fresh) == len(r.want)
			for i := 0; ok && i < len(fresh); i++ {
				ok = fresh[i] == r.want[i] || !strings.Contains(r.want[i], " ") && strings.HasPrefix(fresh[i], r.want[i]+" ")
			}
			if !ok {
				t.Errorf("records:\n%s\nwant:\n%s", strings.Join(fresh, "\n"), strings.Join(r.want, "\n"))
			}
		})
	}
}
