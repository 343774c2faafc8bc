// Package logging builds the server's one logger: JSON lines (log/slog), with
// every secret a line could carry redacted, and the standard library's
// logger routed into it, so that nothing a library or a client writes
// reaches the log raw.
package logging

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// Redacted replaces a secret in a log line.
const Redacted = "[REDACTED]"

// secrets are what a line must never show: API keys (their prefix kept, to
// tell which kind it was), JWTs, bearer tokens, access_token values (a query
// string's, a JSON member's, GraphQL's accessToken), webhook signing
// secrets and the user and password of a URL (scheme://user:pass@host).
var secrets = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(sk_(?:live|test)_)[A-Za-z0-9_-]+`), "${1}" + Redacted},
	{regexp.MustCompile(`(whsec_)[A-Za-z0-9+/=_-]+`), "${1}" + Redacted},
	{regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?`), Redacted},
	{regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;\\]+`), "${1}" + Redacted},
	{regexp.MustCompile(`(?i)(access_?token\\?["']?\s*[:=]\s*\\?["']?)[^\s"'&,;}\\]+`), "${1}" + Redacted},
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@"']+@`), "${1}" + Redacted + "@"},
}

// Redact returns s with every secret replaced by Redacted.
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	for _, p := range secrets {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// mayHoldSecret is a cheap test, one pass over s, that spares almost every
// line the regular expressions: each secret has one of these markers.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '_':
			if i >= 2 && s[i-2:i] == "sk" || i >= 5 && s[i-5:i] == "whsec" {
				return true
			}
		case 'J':
			if i >= 2 && s[i-2:i] == "ey" {
				return true
			}
		case 'b', 'B':
			if hasPrefixFold(s[i:], "bearer") {
				return true
			}
		case 'a', 'A':
			if hasPrefixFold(s[i:], "access") {
				return true
			}
		case '@':
			if strings.Contains(s[:i], "://") {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether s begins with the lowercase ASCII word w
// in any case, without the copy strings.ToLower would make.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// redactor is a slog.Handler that redacts the message and every attribute
// before the handler it wraps writes them.
type redactor struct{ next slog.Handler }

// Redacting wraps h so that no secret reaches what h writes: the message,
// string attributes, errors and any other value as it would be printed,
// in groups too, and the attributes of With.
func Redacting(h slog.Handler) slog.Handler { return redactor{next: h} }

// Enabled implements slog.Handler.
func (r redactor) Enabled(ctx context.Context, l slog.Level) bool { return r.next.Enabled(ctx, l) }

// Handle implements slog.Handler. A record with nothing to redact (the
// access log's lines, nearly always) goes through as it is.
func (r redactor) Handle(ctx context.Context, rec slog.Record) error {
	dirty := mayHoldSecret(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		dirty = dirty || attrMayHoldSecret(a)
		return !dirty
	})
	if !dirty {
		return r.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (r redactor) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = redactAttr(a)
	}
	return redactor{next: r.next.WithAttrs(clean)}
}

// WithGroup implements slog.Handler.
func (r redactor) WithGroup(name string) slog.Handler {
	return redactor{next: r.next.WithGroup(name)}
}

func attrMayHoldSecret(a slog.Attr) bool {
	if mayHoldSecret(a.Key) {
		return true
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return mayHoldSecret(v.String())
	case slog.KindGroup:
		for _, g := range v.Group() {
			if attrMayHoldSecret(g) {
				return true
			}
		}
		return false
	case slog.KindAny:
		return mayHoldSecret(printed(v.Any()))
	default:
		return false
	}
}

// redactAttr returns a with its value redacted; a value that is neither a
// string nor a group (an error, a struct) is replaced by its redacted text
// when that text held a secret.
func redactAttr(a slog.Attr) slog.Attr {
	a.Key = Redact(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]slog.Attr, len(group))
		for i, g := range group {
			clean[i] = redactAttr(g)
		}
		a.Value = slog.GroupValue(clean...)
	case slog.KindAny:
		if s := printed(v.Any()); mayHoldSecret(s) {
			if r := Redact(s); r != s {
				a.Value = slog.StringValue(r)
				return a
			}
		}
		a.Value = v
	default:
		a.Value = v
	}
	return a
}

// printed is how a value of any kind reads in a line: an error's message,
// anything else as fmt prints it.
func printed(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(v)
}
