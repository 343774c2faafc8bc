package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheck: a table of secrets, each accepted or refused for its reason.
func TestCheck(t *testing.T) {
	tests := []struct {
		name, secret string
		refused      string // "": accepted
	}{
		{"placeholder", "replace-with-the-output-of-openssl-rand-hex-32", "placeholder"},
		{"short", "k3J9x", "at least 32 bytes"},
		{"one character", strings.Repeat("a", 64), "too easy to guess"},
		{"a sequence", "abcdefghijklmnopqrstuvwxyz0123456789", "too easy to guess"},
		{"a repeat", strings.Repeat("k3J9x!", 8), "too easy to guess"},
		{"a phrase", "correct-horse-battery-staple-correct-horse", "too easy to guess"},
		{"good hex", "9c4b0e7d2f86a1b35e0d47c9f2a86b13d5e7f90a2c4b6d8e1f3a5c7e9b0d2f41", ""},
		{"good base64", "q7Zr1Kx0pW9mV4cB2nJ8sT6yH3dF5gL0aE1uR7iO9wM=", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.secret)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), HowTo) {
				t.Fatalf("err = %v, want a refusal for %q saying %q", err, tt.refused, HowTo)
			}
		})
	}
	if !errors.Is(Check(Placeholders[0]), ErrPlaceholder) {
		t.Error("the placeholder is not refused as one")
	}
}

// TestRandomSecretsPass: what the docs tell operators to run, and the key
// file a first start writes, always pass: many draws of 32 random bytes in
// hex and in each base64 alphabet score far above MinBits.
func TestRandomSecretsPass(t *testing.T) {
	encodings := map[string]func([]byte) string{
		"hex":            hex.EncodeToString,
		"base64":         base64.StdEncoding.EncodeToString,
		"base64url, raw": base64.RawURLEncoding.EncodeToString,
	}
	for name, enc := range encodings {
		lowest := 1e9
		for range 500 {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			s := enc(b)
			if err := Check(s); err != nil {
				t.Fatalf("%s %s: %v", name, s, err)
			}
			lowest = min(lowest, Strength(s))
		}
		if lowest < 1.5*MinBits {
			t.Errorf("%s: the weakest of 500 draws scored %.0f bits, too near %d", name, lowest, MinBits)
		}
	}
	path := filepath.Join(t.TempDir(), "app.db.key")
	if _, err := FromFile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(strings.TrimSpace(string(raw))); err != nil {
		t.Errorf("the key file a first start writes is refused: %v", err)
	}
}

// TestWordListSorted holds words.txt to what isWord's binary search needs:
// after the comments, lower-case words, one a line, sorted byte-wise
// without repeats; and isWord finds each of them and nothing between.
func TestWordListSorted(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(words, "\n"), "\n")
	if len(lines) < 100 {
		t.Fatalf("%d words: the comments at the top were not skipped as expected", len(lines))
	}
	for i, w := range lines {
		if w == "" || strings.TrimSpace(w) != w || strings.ToLower(w) != w || strings.HasPrefix(w, "#") {
			t.Errorf("line %q: want one lower-case word", w)
		}
		if i > 0 && lines[i-1] >= w {
			t.Errorf("%q after %q: want the words sorted byte-wise, each once", w, lines[i-1])
		}
		if !isWord(w) {
			t.Errorf("isWord(%q) = false", w)
		}
		for _, near := range []string{w + "q", w[:len(w)-1] + "~", "0" + w} {
			if isWord(near) && !slices.Contains(lines, near) {
				t.Errorf("isWord(%q) = true, not in the list", near)
			}
		}
	}
	for _, w := range []string{"", "#", "a", "zzzz", "ab"} {
		if isWord(w) != slices.Contains(lines, w) {
			t.Errorf("isWord(%q) = %v", w, isWord(w))
		}
	}
}
