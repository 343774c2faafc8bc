package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// Two server secrets for the commands' tests: random, as the server
// demands (openssl rand -hex 32).
const (
	testSecretA = "5d0f3a8c91e24b7fa6c3d9e01b8f47a2c6e93d15f07b4a8e2d9c61f3b05a7e4c"
	testSecretB = "b83e17c4f9a02d6e5c1b84f73a9d0e26f4c8b15a7e3d902c6b1f48e5a7d3c09f"
)

// TestMain gives the commands the server secret PostgreSQL requires, as an
// operator's environment would.
func TestMain(m *testing.M) {
	if testutil.OnPostgres() && os.Getenv("SECRET_KEY") == "" {
		os.Setenv("SECRET_KEY", testSecretA)
	}
	os.Exit(m.Run())
}

// TestKeysCommands: keys create prints only the key on stdout, and the key
// logs in; keys revoke makes it stop working.
func TestKeysCommands(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	out, _, err := runCmd(t, "keys", "create", "-database-url", dbURL, "--email", "Ops@Example.com", "--name", "Ops", "--admin")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sk_live_[a-z2-7]{32}\n$`).MatchString(out) {
		t.Fatalf("stdout = %q, want only the key", out)
	}
	key := strings.TrimSpace(out)

	ctx := context.Background()
	db, err := database.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newTestService(t, db)
	if _, err := svc.Login(ctx, key); err != nil {
		t.Fatalf("login with the new key: %v", err)
	}

	if _, _, err := runCmd(t, "keys", "revoke", "-database-url", dbURL, key); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Login(ctx, key); !errors.Is(err, service.ErrInvalidAPIKey) {
		t.Fatalf("login after revoke: %v, want INVALID_API_KEY", err)
	}
}

// TestWebhooksUnopenable: after SECRET_KEY changed, "webhooks unopenable"
// lists the endpoints whose secret it cannot open (id, owner, URL), one a
// line on stdout, and says how many on stderr; with the key that sealed
// them it lists none.
func TestWebhooksUnopenable(t *testing.T) {
	keyA, keyB := testSecretA, testSecretB
	dbURL := testutil.DatabaseURL(t)
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.DatabaseURL, c.SecretKey, c.WebhookAllowPrivate = dbURL, keyA, true
	}))
	var ids []string
	for _, a := range []testutil.Actor{env.Alice, env.Bob} {
		res := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: a.Token,
			Body: map[string]any{"url": "https://hooks.example.com/" + a.UserID}})
		var w struct{ ID string }
		res.Data(t, &w)
		ids = append(ids, w.ID)
	}
	env.App.Close()

	t.Setenv("SECRET_KEY", keyB)
	out, stderr, err := runCmd(t, "webhooks", "unopenable", "-database-url", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	want := ids[0] + "\talice@example.com\thttps://hooks.example.com/" + env.Alice.UserID + "\n" +
		ids[1] + "\tbob@example.com\thttps://hooks.example.com/" + env.Bob.UserID + "\n"
	if out != want || !strings.Contains(stderr, "2 of 2 webhook endpoints") {
		t.Errorf("stdout %q, stderr %q; want\n%s", out, stderr, want)
	}
	// serve says it once, at start, as one structured ERROR line.
	srv := startServe(t, []string{"-database-url", dbURL}, nil)
	var errorLines []map[string]any
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["level"] == "ERROR" {
			errorLines = append(errorLines, rec)
		}
	}
	if len(errorLines) != 1 || errorLines[0]["endpoints"] != 2.0 || errorLines[0]["total"] != 2.0 ||
		!strings.Contains(errorLines[0]["msg"].(string), "rotate-secret") || len(errorLines[0]["first"].([]any)) != 2 {
		t.Errorf("serve logged errors %v; want one naming 2 of 2 endpoints", errorLines)
	}
	srv.cancel()
	<-srv.done
	srv.done <- nil // for the cleanup

	t.Setenv("SECRET_KEY", keyA)
	out, stderr, err = runCmd(t, "webhooks", "unopenable", "-database-url", dbURL)
	if err != nil || out != "" || !strings.Contains(stderr, "0 of 2") {
		t.Errorf("with the sealing key: stdout %q, stderr %q, %v; want none", out, stderr, err)
	}
}

func newTestService(t *testing.T, db *database.DB) *service.Service {
	t.Helper()
	return service.New(db.Client, auth.NewTokens([]byte(strings.Repeat("k", 32)), time.Hour), service.Options{})
}

// TestCommandErrors: bad input to the binary gets a clear message.
func TestCommandErrors(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"keys without subcommand", []string{"keys"}, nil, "keys create"},
		{"webhooks without subcommand", []string{"webhooks"}, nil, "webhooks unopenable"},
		{"keys create without email", []string{"keys", "create", "-database-url", dbURL}, nil, "--email is required"},
		{"keys create with a bad email", []string{"keys", "create", "-database-url", dbURL, "--email", "nope", "--name", "N"}, nil, "email"},
		{"keys revoke unknown", []string{"keys", "revoke", "-database-url", dbURL, "key_01m80r92d8jcq7kyybma0724rk"}, nil, "not found"},
		{"bad duration in env", []string{"migrate", "-database-url", dbURL}, map[string]string{"TOKEN_TTL": "soon"}, "TOKEN_TTL"},
		{"bad number flag", []string{"migrate", "-database-url", dbURL, "-rate-limit-per-minute", "0"}, nil, "rate-limit-per-minute"},
		{"bad database url", []string{"migrate", "-database-url", "mysql://x"}, nil, "DATABASE_URL"},
		{"short jwt secret", []string{"migrate", "-database-url", dbURL}, map[string]string{"JWT_SECRET": "short"}, "JWT_SECRET"},
		{"half of TLS", []string{"serve", "-database-url", dbURL, "-tls-cert-file", "c.pem"}, nil, "TLS_CERT_FILE and TLS_KEY_FILE"},
		{"short server secret", []string{"serve", "-database-url", dbURL}, map[string]string{"SECRET_KEY": "short"}, "SECRET_KEY"},
		{"PostgreSQL without a server secret", []string{"serve", "-database-url", "postgres://nobody@127.0.0.1:1/none", "-addr", "127.0.0.1:0"}, map[string]string{"SECRET_KEY": ""}, "SECRET_KEY: required with PostgreSQL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, stderr, err := runCmd(t, tc.args...)
			if err == nil {
				t.Fatal("want an error")
			}
			if msg := err.Error() + stderr; !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q (stderr %q) does not mention %q", err, stderr, tc.want)
			}
		})
	}
}

// TestHelp: -h lists every setting with its environment variable.
func TestHelp(t *testing.T) {
	_, stderr, err := runCmd(t, "serve", "-h")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	for _, env := range []string{"ADDR", "DATABASE_URL", "REDIS_URL", "JWT_SECRET", "SECRET_KEY", "TOKEN_TTL", "RATE_LIMIT_PER_MINUTE",
		"RATE_LIMIT_PER_HOUR", "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_ALLOW_PRIVATE", "TLS_CERT_FILE", "TLS_KEY_FILE",
		"PLAYGROUND", "LOG_LEVEL", "SANDBOX", "REQUEST_TIMEOUT", "GRAPHQL_ANONYMOUS_PER_MINUTE"} {
		if !strings.Contains(stderr, "env "+env) {
			t.Errorf("help does not mention %s", env)
		}
	}
	for _, arg := range []string{"help", "-h", "--help"} {
		out, _, err := runCmd(t, arg)
		if err != nil {
			t.Fatalf("server %s: %v", arg, err)
		}
		for c := range commands {
			if !regexp.MustCompile(`(?m)^  ` + c + `\b`).MatchString(out) {
				t.Errorf("server %s does not list the command %s:\n%s", arg, c, out)
			}
		}
	}
}

// TestCommandHelp: each command's -h answers with its own synopsis,
// arguments and flags, short, and points to `server serve -h` for the
// settings; a group's -h lists its subcommands. Every command line of the
// help table has a row.
func TestCommandHelp(t *testing.T) {
	cases := []struct {
		args []string
		want []string // arguments and own flags the help must name
	}{
		{[]string{"migrate"}, []string{"server migrate", "DATABASE_URL"}},
		{[]string{"keys", "create"}, []string{"--email E", "-email", "-name", "-admin"}},
		{[]string{"keys", "revoke"}, []string{"KEY_ID|KEY", "key_…", "sk_live_…"}},
		{[]string{"keys", "list"}, []string{"--email E", "-email"}},
		{[]string{"users", "list"}, []string{"-role", "-disabled", "-email"}},
		{[]string{"users", "create"}, []string{"-email", "-name", "-role"}},
		{[]string{"users", "set-role"}, []string{"USER ROLE", "USER  ", "ROLE  "}},
		{[]string{"users", "disable"}, []string{"USER  "}},
		{[]string{"users", "enable"}, []string{"USER  "}},
		{[]string{"webhooks", "unopenable"}, []string{"SECRET_KEY"}},
		{[]string{"healthcheck"}, []string{"-timeout"}},
		{[]string{"backup"}, []string{"backup PATH", "PATH  ", "PATH.key"}},
		{[]string{"restore"}, []string{"restore PATH", "PATH  ", "never an SQLite URI"}},
		{[]string{"keys"}, []string{"keys create", "keys revoke", "keys list"}},
		{[]string{"users"}, []string{"users list", "users create", "users set-role", "users disable", "users enable"}},
		{[]string{"webhooks"}, []string{"webhooks unopenable"}},
	}
	covered := map[string]bool{"serve": true} // serve -h lists every setting: TestHelp
	for _, tc := range cases {
		name := strings.Join(tc.args, " ")
		covered[name] = true
		for _, form := range [][]string{append(slices.Clone(tc.args), "-h"), append([]string{"help"}, tc.args...)} {
			t.Run(strings.Join(form, " "), func(t *testing.T) {
				out, stderr, err := runCmd(t, form...)
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err = %v, want flag.ErrHelp", err)
				}
				if out != "" {
					t.Errorf("help on stdout, which is for results: %q", out)
				}
				for _, w := range append(tc.want, "server "+name) {
					if !strings.Contains(stderr, w) {
						t.Errorf("help does not name %q:\n%s", w, stderr)
					}
				}
				pointer := "server serve -h" // where the settings are
				if helpGroup(name) {
					pointer = "<subcommand> -h" // where its subcommands' flags are
				}
				if !strings.Contains(stderr, pointer) {
					t.Errorf("help does not point to %q:\n%s", pointer, stderr)
				}
				if strings.Contains(stderr, "RATE_LIMIT_PER_MINUTE") {
					t.Errorf("help lists the server's settings, burying the command's own:\n%s", stderr)
				}
				if n := strings.Count(stderr, "\n"); n >= 25 {
					t.Errorf("help is %d lines, want fewer than 25:\n%s", n, stderr)
				}
			})
		}
	}
	known := map[string]bool{}
	for _, v := range config.Variables() {
		known[v] = true
	}
	for _, h := range helps {
		if !covered[h.name] {
			t.Errorf("no row for %q", h.name)
		}
		for _, v := range h.settings {
			if !known[v] {
				t.Errorf("%s names the setting %s, which the server does not read", h.name, v)
			}
		}
	}
}

// helpGroup reports whether name is a group of subcommands.
func helpGroup(name string) bool { return name == "keys" || name == "users" || name == "webhooks" }
