package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/auth"
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

// TestMain gives the commands the server secret PostgreSQL requires, as an
// operator's environment would.
func TestMain(m *testing.M) {
	if testutil.OnPostgres() && os.Getenv("SECRET_KEY") == "" {
		os.Setenv("SECRET_KEY", strings.Repeat("s", 32))
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
	out, _, err := runCmd(t, "help")
	if err != nil || !strings.Contains(out, "keys create") {
		t.Errorf("help = %q, %v", out, err)
	}
}
