package service

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/viewer"
)

// TokenType is the token_type of every access token.
const TokenType = "Bearer"

// Token is the answer to a login.
type Token struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// ErrInvalidAPIKey is the one answer to a wrong, unknown or revoked key: the
// caller learns nothing about which.
var ErrInvalidAPIKey = apperr.New(apperr.CodeInvalidAPIKey, "the API key is invalid")

// lastUsedResolution is how stale api_keys.last_used_at may get, so that a
// busy key does not write on every use.
const lastUsedResolution = time.Minute

// system marks work done by the service itself rather than for a viewer.
func system(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}

// Login exchanges an API key for an access token. With a LoginLimiter, an
// address that has used up its failed logins is refused (RATE_LIMITED), even
// with a good key, until its window resets; only INVALID_API_KEY answers
// count, so successful logins cost nothing.
func (s *Service) Login(ctx context.Context, apiKey string) (Token, error) {
	if strings.TrimSpace(apiKey) == "" {
		return Token{}, apperr.Validation("api_key", "is required")
	}
	addr := clientAddr(ctx)
	if s.opts.LoginLimiter != nil && addr != "" {
		if d := s.opts.LoginLimiter.Check(ctx, addr); !d.Allowed {
			return Token{}, apperr.RateLimited("too many failed logins from this address", d.Window, d.Limit, d.RetryAfter)
		}
	}
	tok, err := s.login(ctx, apiKey)
	if errors.Is(err, ErrInvalidAPIKey) && s.opts.LoginLimiter != nil && addr != "" {
		s.opts.LoginLimiter.Spend(ctx, addr)
	}
	return tok, err
}

func (s *Service) login(ctx context.Context, apiKey string) (Token, error) {
	if !auth.LooksLikeKey(apiKey) {
		return Token{}, ErrInvalidAPIKey
	}
	hash := auth.HashKey(apiKey)
	k, err := s.db.APIKey.Query().
		Where(apikey.KeyHash(hash)).
		WithOwner().
		Only(system(ctx))
	if ent.IsNotFound(err) {
		return Token{}, ErrInvalidAPIKey
	}
	if err != nil {
		return Token{}, fmt.Errorf("look up key: %w", err)
	}
	// The lookup went by hash; compare again in constant time so that the
	// answer never depends on how much of a guess matched.
	now := time.Now()
	st := newKeyState(k, now)
	if subtle.ConstantTimeCompare([]byte(k.KeyHash), []byte(hash)) != 1 || st.revoked || st.disabled || st.expired(now) {
		return Token{}, ErrInvalidAPIKey
	}
	tok, life, err := s.tokens.IssueBefore(k.UserID, k.ID, st.expiresAt)
	if err != nil {
		return Token{}, err
	}
	s.keys.put(k.ID, st)
	s.touchKey(ctx, k, now)
	showOnce(ctx, tok)
	return Token{AccessToken: tok, TokenType: TokenType, ExpiresIn: int(life / time.Second)}, nil
}

// touchKey records that a key was used, at most once per lastUsedResolution
// per key across replicas (the update only takes a row older than that),
// in the background: never in a request's path or its transaction.
func (s *Service) touchKey(ctx context.Context, k *ent.APIKey, now time.Time) {
	if k.LastUsedAt != nil && now.Sub(*k.LastUsedAt) < lastUsedResolution {
		return
	}
	ctx = system(context.WithoutCancel(ctx))
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, lastUsedResolution)
		defer cancel()
		stamp := now.UTC()
		err := s.db.APIKey.Update().
			Where(apikey.ID(k.ID), apikey.Or(apikey.LastUsedAtIsNil(), apikey.LastUsedAtLT(stamp.Add(-lastUsedResolution)))).
			SetLastUsedAt(stamp).
			Exec(ctx)
		if err != nil {
			s.log.WarnContext(ctx, "record key use", "key_id", k.ID, "err", err)
		}
	})
}

// Authenticate checks an access token and returns its viewer: TOKEN_EXPIRED
// for a good token past its expiry, UNAUTHORIZED for anything else wrong,
// including a token whose key has been revoked.
func (s *Service) Authenticate(ctx context.Context, token string) (viewer.Viewer, error) {
	return s.authenticate(ctx, token, s.opts.KeyRecheck)
}

// authenticate is Authenticate trusting a cached key state no older than
// maxAge: a stream's recheck asks for a fresher one than a request does, so
// that its own interval plus the cache's age stays within KeyRecheck.
func (s *Service) authenticate(ctx context.Context, token string, maxAge time.Duration) (viewer.Viewer, error) {
	claims, err := s.tokens.Parse(token)
	switch {
	case errors.Is(err, auth.ErrTokenExpired):
		return viewer.Viewer{}, apperr.New(apperr.CodeTokenExpired, "the access token has expired; log in again")
	case err != nil:
		return viewer.Viewer{}, apperr.Unauthorized("the access token is invalid")
	}
	st, err := s.keyState(ctx, claims.KeyID, maxAge)
	if err != nil {
		return viewer.Viewer{}, err
	}
	switch {
	case st.revoked || st.userID != claims.UserID:
		return viewer.Viewer{}, apperr.Unauthorized("the access token's API key has been revoked")
	case st.disabled:
		return viewer.Viewer{}, apperr.Unauthorized("the access token's user has been disabled")
	case st.expired(time.Now()):
		return viewer.Viewer{}, apperr.New(apperr.CodeTokenExpired, "the access token's API key has expired")
	}
	return viewer.Viewer{UserID: st.userID, KeyID: claims.KeyID, Role: st.role, ReadOnly: st.readOnly, Limits: st.limits}, nil
}

// keyState returns the cached state of a key, reading it when older than
// maxAge (at most the cache's KeyRecheck).
func (s *Service) keyState(ctx context.Context, keyID string, maxAge time.Duration) (keyState, error) {
	now := time.Now()
	if st, ok := s.keys.get(keyID, now, maxAge); ok {
		return st, nil
	}
	k, err := s.db.APIKey.Query().Where(apikey.ID(keyID)).WithOwner().Only(system(ctx))
	switch {
	case ent.IsNotFound(err):
		st := keyState{revoked: true, checked: now}
		s.keys.put(keyID, st)
		return st, nil
	case err != nil:
		return keyState{}, fmt.Errorf("look up key: %w", err)
	}
	st := newKeyState(k, now)
	s.keys.put(keyID, st)
	if !st.revoked && !st.disabled && !st.expired(now) {
		s.touchKey(ctx, k, now)
	}
	return st, nil
}
