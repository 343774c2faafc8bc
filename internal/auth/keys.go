// Package auth holds the credentials of the API: API keys (made, hashed and
// shown once) and the short-lived HS256 access tokens a key is exchanged for.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// Key prefixes: live keys in production, test keys in the sandbox.
const (
	LivePrefix = "sk_live_"
	TestPrefix = "sk_test_"
)

// keyEncoding writes the random part in lowercase letters and digits only,
// so a key survives double-click selection and URL or shell quoting.
var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewKey returns a fresh API key: the prefix and 32 random characters
// (160 bits).
func NewKey(prefix string) string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return prefix + strings.ToLower(keyEncoding.EncodeToString(b))
}

// HashKey is what the database keeps of a key: its SHA-256, hex encoded. A
// key has 160 random bits, so a fast hash is enough (no password stretching).
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// LooksLikeKey reports whether s has the shape of a key this service issues,
// which lets login refuse junk without a database lookup.
func LooksLikeKey(s string) bool {
	rest, ok := strings.CutPrefix(s, LivePrefix)
	if !ok {
		rest, ok = strings.CutPrefix(s, TestPrefix)
	}
	if !ok || len(rest) < 32 || len(rest) > 128 {
		return false
	}
	for _, c := range rest {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// DisplayPrefix is the part of a key kept in clear for people to tell keys apart.
func DisplayPrefix(key string) string {
	const n = len(LivePrefix) + 4
	if len(key) < n {
		return key
	}
	return key[:n]
}
