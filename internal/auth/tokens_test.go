package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParse: a token is good until its expiry, then TOKEN_EXPIRED, whether
// or not it was verified (and cached) before; forged tokens never pass.
func TestParse(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tokens := NewTokens([]byte(strings.Repeat("s", 32)), time.Hour)
	tokens.now = func() time.Time { return now }
	good, err := tokens.Issue("user_1", "key_1")
	if err != nil {
		t.Fatal(err)
	}
	forger := NewTokens([]byte(strings.Repeat("f", 32)), time.Hour)
	forger.now = tokens.now
	forged, _ := forger.Issue("user_1", "key_1")

	cases := []struct {
		name  string
		token string
		at    time.Time
		want  error
	}{
		{"fresh", good, now, nil},
		{"again, from the cache", good, now.Add(59 * time.Minute), nil},
		{"expired after being cached", good, now.Add(time.Hour), ErrTokenExpired},
		{"forged", forged, now, ErrTokenInvalid},
		{"forged, asked twice", forged, now, ErrTokenInvalid},
		{"garbage", "a.b.c", now, ErrTokenInvalid},
		{"signature tampered", good[:len(good)-2] + "xx", now, ErrTokenInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now = tc.at
			c, err := tokens.Parse(tc.token)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && (c.UserID != "user_1" || c.KeyID != "key_1") {
				t.Fatalf("claims = %+v", c)
			}
		})
	}
	// An expired token that was never cached is TOKEN_EXPIRED too.
	fresh := NewTokens(tokens.secret, time.Hour)
	fresh.now = func() time.Time { return now.Add(2 * time.Hour) }
	if _, err := fresh.Parse(good); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("uncached expired: %v", err)
	}
}
