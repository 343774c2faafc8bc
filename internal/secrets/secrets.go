// Package secrets holds the server secret and what derives from it: the
// token signing key, the sandbox seed, and the box that encrypts webhook
// signing secrets before they reach the database. The server secret itself
// is never stored in the database, so a dump or a stolen backup holds
// nothing that signs a token or a webhook.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MinKeyLen is the shortest server secret accepted, in bytes.
const MinKeyLen = 32

// Purposes of the keys derived from the server secret: each is its own key,
// so that one leaking says nothing of the others.
const (
	PurposeTokens   = "itemsvc token signing v1"
	PurposeWebhooks = "itemsvc webhook secrets v1"
	PurposeSandbox  = "itemsvc sandbox seed v1"
)

// Keys is the server secret.
type Keys struct{ master []byte }

// New returns the keys of a server secret of at least MinKeyLen bytes.
func New(secret []byte) (*Keys, error) {
	if len(secret) < MinKeyLen {
		return nil, fmt.Errorf("the server secret must be at least %d bytes, got %d", MinKeyLen, len(secret))
	}
	return &Keys{master: secret}, nil
}

// Random returns keys of a fresh random secret, for a database that lives
// only as long as the process (sqlite::memory:).
func Random() *Keys {
	b := make([]byte, MinKeyLen)
	_, _ = rand.Read(b)
	return &Keys{master: b}
}

// FromFile reads the server secret kept in path, or creates the file with a
// new random secret (mode 0600) if there is none. A file that others may
// read is refused: it is as good as the secret.
func FromFile(path string) (*Keys, error) {
	b := make([]byte, MinKeyLen)
	_, _ = rand.Read(b)
	// A first start makes the database's folder too (data/ by default).
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create secret key folder: %w", err)
	}
	// Written whole under a temporary name, then linked into place, which
	// fails if the file exists: a server starting beside this one on the
	// same database never reads a file half written, and the first link
	// wins for both.
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("create secret key file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // the link, if made, keeps the file
	_, werr := tmp.WriteString(hex.EncodeToString(b) + "\n")
	if serr := tmp.Sync(); werr == nil {
		werr = serr
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("write secret key file %s: %w", path, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create secret key file %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secret key file %s may be read by others (mode %#o): chmod 600 it", path, info.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secret key file: %w", err)
	}
	k, err := New([]byte(strings.TrimSpace(string(raw))))
	if err != nil {
		return nil, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return k, nil
}

// Derive returns the 32-byte key of purpose (HKDF-SHA256).
func (k *Keys) Derive(purpose string) []byte {
	key, err := hkdf.Key(sha256.New, k.master, nil, purpose, 32)
	if err != nil {
		// Only a length beyond 255 hash sizes fails.
		panic(fmt.Sprintf("secrets: derive: %v", err))
	}
	return key
}

// Box returns the box that seals values for purpose.
func (k *Keys) Box(purpose string) *Box {
	block, err := aes.NewCipher(k.Derive(purpose))
	if err != nil {
		panic(fmt.Sprintf("secrets: %v", err)) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(fmt.Sprintf("secrets: %v", err))
	}
	// The key id is derived apart from the key (its own HKDF purpose), so
	// that storing it tells nothing of the key; 48 bits tell two server
	// secrets apart.
	kid := hex.EncodeToString(k.Derive(purpose + " key id")[:6])
	return &Box{aead: aead, prefix: sealedV2 + kid + ":"}
}

// Formats of sealed values. SealedPrefix starts all of them, so that stored
// plaintext can be told apart, by a query too. Version 2 names the key that
// sealed it ("sealed:v2:<key id>:…"), so that the values another server
// secret sealed are found by a query, without opening them (Box.Prefix);
// version 1 ("sealed:v1:…") did not, and is still opened.
const (
	SealedPrefix = "sealed:"
	LegacyPrefix = "sealed:v1:"
	sealedV2     = "sealed:v2:"
)

// ErrOpen is returned for a sealed value that does not open with this
// server's secret: another secret sealed it, or it was altered.
var ErrOpen = errors.New("the value does not open with this server's SECRET_KEY (was it changed?)")

// Box encrypts short values (AES-256-GCM) for storage.
type Box struct {
	aead   cipher.AEAD
	prefix string // of the values it seals: the format and the key's id
}

// Seal encrypts plain; the result is text, safe for a text column.
func (b *Box) Seal(plain string) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, []byte(plain), nil)
	return b.prefix + base64.RawStdEncoding.EncodeToString(out)
}

// Prefix starts every value this box seals, and no value another server
// secret sealed (but for a chance of one in 2^48): a stored value without
// it does not open here.
func (b *Box) Prefix() string { return b.prefix }

// Open decrypts a value Seal made, in either format.
func (b *Box) Open(sealed string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, b.prefix)
	if !ok {
		// A value of version 1 carries no key id: only opening it tells.
		if raw, ok = strings.CutPrefix(sealed, LegacyPrefix); !ok {
			return "", ErrOpen
		}
	}
	data, err := base64.RawStdEncoding.DecodeString(raw)
	n := b.aead.NonceSize()
	if err != nil || len(data) < n {
		return "", ErrOpen
	}
	plain, err := b.aead.Open(nil, data[:n], data[n:], nil)
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// IsSealed reports whether v is a value Seal made, in any format (rather
// than plaintext written before secrets were sealed).
func IsSealed(v string) bool { return strings.HasPrefix(v, SealedPrefix) }
