// Package webhook delivers item events to their receivers: the address guard
// against server-side request forgery, Standard Webhooks signing, and the
// dispatcher that turns outbox events into deliveries, sends them, retries
// them and keeps a log of every attempt.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as Standard Webhooks writes them;
// the key itself is the base64 text after it.
const SecretPrefix = "whsec_"

// Standard Webhooks headers of every delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretBytes is the key length of new secrets: 192 bits, within the 24–64
// bytes that Standard Webhooks recommends.
const secretBytes = 24

// NewSecret returns a fresh signing secret ("whsec_…").
func NewSecret() string {
	key := make([]byte, secretBytes)
	_, _ = rand.Read(key) // never fails (crypto/rand documents it)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Sign returns the value of the webhook-signature header: one "v1,<base64
// HMAC-SHA256>" of "id.timestamp.body" per secret, separated by spaces, so a
// receiver that knows either of two secrets (during a rotation) accepts it.
func Sign(id string, ts time.Time, body []byte, secrets ...string) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("sign: no secret")
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// secretKey decodes the key bytes of a "whsec_…" secret.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("sign: malformed secret: %w", err)
	}
	return key, nil
}
