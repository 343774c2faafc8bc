package rest_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestDumpHoldsNoSecret reads every column of every table, as someone
// holding a backup would, and tries each value as a token signing key and as
// a webhook secret: none works. Secrets that an earlier version stored in
// plaintext are gone after a start.
func TestDumpHoldsNoSecret(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.WebhookAllowPrivate = true }))
	ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
	res := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
		Body: map[string]any{"url": "https://example.com/hook"}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", res.Status, res.Body)
	}
	var hook struct{ ID, Secret string }
	res.Data(t, &hook)
	res = env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + hook.ID + "/rotate-secret", Token: env.Alice.Token})
	var rotated struct{ Secret string }
	res.Data(t, &rotated)
	if hook.Secret == "" || rotated.Secret == "" {
		t.Fatalf("secrets not shown: %q %q", hook.Secret, rotated.Secret)
	}
	signing := []string{hook.Secret, rotated.Secret}

	// What an earlier version left: a generated signing secret and a webhook
	// secret in plaintext. A start cleans both up.
	legacy := strings.Repeat("ab", 32)
	if err := env.App.DB.Client.Setting.Create().SetID("jwt_secret").SetValue(legacy).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	plain := "whsec_" + strings.Repeat("A", 43) + "="
	bobs, err := env.App.DB.Client.WebhookEndpoint.Create().SetUserID(env.Bob.UserID).SetURL("https://example.com/b").
		SetSecret(plain).SetEvents([]string{}).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signing = append(signing, plain)
	restarted, err := app.New(context.Background(), env.App.Config, env.App.Logger, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restarted.Close() })

	values := dump(t, env.App.DB.SQL, env.App.DB.Dialect)
	if len(values) < 20 {
		t.Fatalf("dumped %d values: the dump does not see the data", len(values))
	}
	// The control: the server's own key signs a token it accepts.
	if !acceptsKey(t, env, env.App.SigningKey) {
		t.Fatal("a token signed with the server's own key is refused: the check cannot fail")
	}
	for _, v := range values {
		if strings.Contains(v, legacy) {
			t.Errorf("the generated signing secret of an earlier version is still stored: %.80q", v)
		}
		for _, s := range signing {
			key := strings.TrimPrefix(s, "whsec_")
			if strings.Contains(v, s) || strings.Contains(v, key) {
				t.Errorf("the dump holds a webhook signing secret: %.80q", v)
			}
		}
		if len(v) < 32 {
			continue
		}
		candidates := [][]byte{[]byte(v)}
		if b, err := hex.DecodeString(v); err == nil {
			candidates = append(candidates, b)
		}
		for _, c := range candidates {
			if acceptsKey(t, env, c) {
				t.Errorf("a value of the dump signs tokens the server accepts: %.80q", v)
			}
		}
	}
	if ep, err := restarted.DB.Client.WebhookEndpoint.Get(ctx, bobs.ID); err != nil || ep.Secret == plain {
		t.Errorf("Bob's plaintext secret was not sealed at start: %v", err)
	}
}

// acceptsKey reports whether the server accepts an admin token signed with key.
func acceptsKey(t *testing.T, env *testutil.Env, key []byte) bool {
	t.Helper()
	tok, err := auth.NewTokens(key, time.Hour).Issue(env.Admin.UserID, env.Admin.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	return env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: tok}).Status == http.StatusOK
}

// dump returns every non-null value of every column of every table of the
// server's database (its schema, on PostgreSQL), as text.
func dump(t *testing.T, db *sql.DB, dialect string) []string {
	t.Helper()
	listing := "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'"
	if dialect == "postgres" {
		listing = "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
	}
	rows, err := db.Query(listing)
	if err != nil {
		t.Fatal(err)
	}
	var cols [][2]string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, [2]string{table, col})
	}
	rows.Close()
	var out []string
	for _, c := range cols {
		rows, err := db.Query(fmt.Sprintf(`SELECT CAST(%q AS TEXT) FROM %q`, c[1], c[0]))
		if err != nil {
			t.Fatalf("dump %s.%s: %v", c[0], c[1], err)
		}
		for rows.Next() {
			var v sql.NullString
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v.Valid {
				out = append(out, v.String)
			}
		}
		rows.Close()
	}
	return out
}
