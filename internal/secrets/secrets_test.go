package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBox: a sealed value opens with the same secret and purpose only, and
// tells nothing of the plaintext.
func TestBox(t *testing.T) {
	k, err := New([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New([]byte(strings.Repeat("o", 32)))
	const plain = "whsec_c2VjcmV0"
	sealed := k.Box(PurposeWebhooks).Seal(plain)
	if !IsSealed(sealed) || strings.Contains(sealed, "c2VjcmV0") || sealed == k.Box(PurposeWebhooks).Seal(plain) {
		t.Fatalf("sealed %q: not sealed, leaks the plaintext, or is not randomized", sealed)
	}
	// The format names the key: the same secret seals under the same
	// prefix, another under another, and neither holds a derived key.
	if !strings.HasPrefix(sealed, k.Box(PurposeWebhooks).Prefix()) || !strings.HasPrefix(sealed, "sealed:v2:") ||
		k.Box(PurposeWebhooks).Prefix() == other.Box(PurposeWebhooks).Prefix() {
		t.Fatalf("prefixes %q and %q of two secrets, sealed %q", k.Box(PurposeWebhooks).Prefix(), other.Box(PurposeWebhooks).Prefix(), sealed)
	}
	// A value of the first format, without a key id, still opens.
	legacy := LegacyPrefix + strings.TrimPrefix(sealed, k.Box(PurposeWebhooks).Prefix())
	cases := []struct {
		name  string
		box   *Box
		value string
		ok    bool
	}{
		{"same secret and purpose", k.Box(PurposeWebhooks), sealed, true},
		{"another secret", other.Box(PurposeWebhooks), sealed, false},
		{"another purpose", k.Box(PurposeTokens), sealed, false},
		{"altered", k.Box(PurposeWebhooks), sealed[:len(sealed)-2] + "AA", false},
		{"plaintext", k.Box(PurposeWebhooks), plain, false},
		{"truncated", k.Box(PurposeWebhooks), SealedPrefix + "AAAA", false},
		{"version 1", k.Box(PurposeWebhooks), legacy, true},
		{"version 1, another secret", other.Box(PurposeWebhooks), legacy, false},
		{"another key id", k.Box(PurposeWebhooks), other.Box(PurposeWebhooks).Prefix() + strings.TrimPrefix(sealed, k.Box(PurposeWebhooks).Prefix()), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.box.Open(c.value)
			if c.ok != (err == nil) || c.ok && got != plain {
				t.Fatalf("Open = %q, %v; want ok=%v", got, err, c.ok)
			}
		})
	}
	if string(k.Derive(PurposeTokens)) == string(k.Derive(PurposeWebhooks)) {
		t.Error("two purposes derive the same key")
	}
}

// TestFromFile: the first start makes a 0600 key file, later starts read the
// same secret, and a file others may read is refused.
func TestFromFile(t *testing.T) {
	dir := t.TempDir()
	// A first start: the database's folder does not exist yet.
	path := filepath.Join(dir, "data", "app.db.key")
	first, err := FromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
	again, err := FromFile(path)
	if err != nil || string(again.Derive(PurposeTokens)) != string(first.Derive(PurposeTokens)) {
		t.Fatalf("second read: %v, or another secret", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FromFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file: %v, want refused", err)
	}
	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, []byte("tooshort\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FromFile(short); err == nil {
		t.Fatal("a short key file was accepted")
	}
}
