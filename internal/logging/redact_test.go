package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/logging"
)

const (
	key = "sk_live_abcdefghijklmnopqrstuvwxyz234567"
	jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyXzEifQ.c2lnbmF0dXJl"
)

// TestRedact: each kind of secret is replaced, wherever it stands in a
// line; text without one is kept as it is.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"login with " + key, "login with sk_live_[REDACTED]"},
		{"sandbox sk_test_abc234 key", "sandbox sk_test_[REDACTED] key"},
		{"token " + jwt + " expired", "token [REDACTED] expired"},
		{"Authorization: Bearer opaque-token-1", "Authorization: Bearer [REDACTED]"},
		{"authorization: bearer opaque-token-1, next", "authorization: bearer [REDACTED], next"},
		{"GET /v1/events/stream?access_token=abc.def&x=1", "GET /v1/events/stream?access_token=[REDACTED]&x=1"},
		{`{"access_token":"abc","token_type":"Bearer"}`, `{"access_token":"[REDACTED]","token_type":"Bearer"}`},
		{`{\"accessToken\":\"abc\"}`, `{\"accessToken\":\"[REDACTED]\"}`},
		{"secret whsec_c2VjcmV0IHNlY3JldA== rotated", "secret whsec_[REDACTED] rotated"},
		{`post to "https://user:pa55@hooks.example.com/in": refused`, `post to "https://[REDACTED]@hooks.example.com/in": refused`},
		{"dial postgres://app:pw@db:5432/items failed", "dial postgres://[REDACTED]@db:5432/items failed"},
		{"mail alice@example.com from https://example.com/", "mail alice@example.com from https://example.com/"},
		{"request", "request"},
		{"access denied", "access denied"},
		{"", ""},
	} {
		if got := logging.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLogger: the logger writes one JSON object a line, redacting the
// message, string attributes, errors, groups and With's attributes; the
// standard logger, once Install routed it, writes the same lines, a
// newline in its text escaped rather than starting a line of its own.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	l := logging.New(&buf, slog.LevelInfo)
	l.With("key", key).Info("login "+key, "err", errors.New("bad token "+jwt),
		slog.Group("req", "auth", "Bearer "+jwt), "n", 3)
	prevDefault, prevFlags, prevOut := slog.Default(), log.Flags(), log.Writer()
	t.Cleanup(func() { slog.SetDefault(prevDefault); log.SetOutput(prevOut); log.SetFlags(prevFlags) })
	logging.Install(l)
	log.Printf("decoding error body:%s\n{\"level\":\"ERROR\",\"msg\":\"forged\"}", key)

	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
	}
	for _, secret := range []string{key[len("sk_live_"):], jwt} {
		if strings.Contains(out, secret) {
			t.Errorf("%q in clear:\n%s", secret, out)
		}
	}
	for _, want := range []string{`"n":3`, `"level":"WARN","msg":"decoding error body:sk_live_[REDACTED]\n{\"level\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// TestRedactURL: a URL's user and password and each query value are
// redacted, the rest kept as it was (query names and their order too); a
// URL without credentials is returned whole.
func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://hooks.example.com/in", "https://hooks.example.com/in"},
		{"https://user:pa55@hooks.example.com/in", "https://REDACTED:REDACTED@hooks.example.com/in"},
		{"https://user@hooks.example.com/in", "https://REDACTED@hooks.example.com/in"},
		{"https://hooks.example.com/in?token=s3cret&v=2", "https://hooks.example.com/in?token=REDACTED&v=REDACTED"},
		{"https://hooks.example.com/in?z=1&a=2&flag&empty=", "https://hooks.example.com/in?z=REDACTED&a=REDACTED&flag&empty="},
		{"https://u:p@hooks.example.com:8443/a/b?sig=x%2Fy#frag", "https://REDACTED:REDACTED@hooks.example.com:8443/a/b?sig=REDACTED#frag"},
		{"%zz not a url", "%zz not a url"},
	} {
		if got := logging.RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
