package auth

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors of Tokens.Parse.
var (
	ErrTokenExpired = errors.New("token expired")
	ErrTokenInvalid = errors.New("token invalid")
)

// Tokens issues and checks the access tokens: HS256 JWTs whose subject is the
// user id and whose kid header is the id of the API key they were issued for.
type Tokens struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
	parser *jwt.Parser

	// verified remembers tokens whose signature has been checked, so that a
	// client's repeated requests skip the HMAC and the claims decoding
	// (a visible share of a get-by-id in profiles). Expiry is still checked on every use.
	mu       sync.RWMutex
	verified map[string]Claims
}

// maxVerified bounds the verified-token cache; when full it starts afresh.
const maxVerified = 10000

// NewTokens returns a token issuer with a signing secret and a lifetime.
func NewTokens(secret []byte, ttl time.Duration) *Tokens {
	t := &Tokens{secret: secret, ttl: ttl, now: time.Now, verified: map[string]Claims{}}
	t.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return t.now() }),
	)
	return t
}

// WithClock returns a copy of t that reads time from now (tests issue tokens
// in the past to prove expiry without waiting).
func (t *Tokens) WithClock(now func() time.Time) *Tokens {
	c := NewTokens(t.secret, t.ttl)
	c.now = now
	return c
}

// TTL is the lifetime of new tokens.
func (t *Tokens) TTL() time.Duration { return t.ttl }

// Claims are what a valid token says.
type Claims struct {
	UserID    string
	KeyID     string
	ExpiresAt time.Time
}

// Issue returns a signed token for a user and key.
func (t *Tokens) Issue(userID, keyID string) (string, error) {
	s, _, err := t.IssueBefore(userID, keyID, time.Time{})
	return s, err
}

// IssueBefore returns a signed token for a user and key that expires after
// the token lifetime or at limit (the key's own expiry), whichever is
// first, and how long it lives. A zero limit is none.
func (t *Tokens) IssueBefore(userID, keyID string, limit time.Time) (string, time.Duration, error) {
	now := t.now()
	exp := now.Add(t.ttl)
	if !limit.IsZero() && limit.Before(exp) {
		exp = limit
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject:   userID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
	})
	tok.Header["kid"] = keyID
	s, err := tok.SignedString(t.secret)
	if err != nil {
		return "", 0, fmt.Errorf("sign token: %w", err)
	}
	return s, exp.Sub(now), nil
}

// Parse checks a token's signature and expiry. An expired token is reported
// as ErrTokenExpired only when its signature is good: a forged token never
// learns more than ErrTokenInvalid.
func (t *Tokens) Parse(raw string) (Claims, error) {
	t.mu.RLock()
	c, ok := t.verified[raw]
	t.mu.RUnlock()
	if ok {
		if !t.now().Before(c.ExpiresAt) {
			return Claims{}, ErrTokenExpired
		}
		return c, nil
	}
	c, err := t.parse(raw)
	if err != nil {
		return Claims{}, err
	}
	t.mu.Lock()
	if len(t.verified) >= maxVerified {
		clear(t.verified)
	}
	t.verified[raw] = c
	t.mu.Unlock()
	return c, nil
}

// parse verifies a token the cache does not know.
func (t *Tokens) parse(raw string) (Claims, error) {
	var rc jwt.RegisteredClaims
	tok, err := t.parser.ParseWithClaims(raw, &rc, func(*jwt.Token) (any, error) { return t.secret, nil })
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) && !errors.Is(err, jwt.ErrTokenSignatureInvalid) && tok != nil && tok.Signature != nil {
			return Claims{}, ErrTokenExpired
		}
		return Claims{}, ErrTokenInvalid
	}
	kid, _ := tok.Header["kid"].(string)
	if rc.Subject == "" || kid == "" {
		return Claims{}, ErrTokenInvalid
	}
	return Claims{UserID: rc.Subject, KeyID: kid, ExpiresAt: rc.ExpiresAt.Time}, nil
}
