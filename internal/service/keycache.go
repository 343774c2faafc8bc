package service

import (
	"slices"
	"sync"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/viewer"
)

// keyState is what a token check needs to know of its API key.
type keyState struct {
	userID   string
	role     viewer.Role
	revoked  bool
	disabled bool // the key's owner
	readOnly bool // the key lacks the write scope
	// limits are the key's own rate limits (ratelimit.Own); nil: none.
	limits map[string]int64
	// expiresAt is the key's expiry; zero: none.
	expiresAt time.Time
	checked   time.Time
}

// newKeyState is the state of a key read with its owner.
func newKeyState(k *ent.APIKey, now time.Time) keyState {
	st := keyState{
		userID:   k.UserID,
		role:     viewer.Role(k.Edges.Owner.Role),
		revoked:  k.RevokedAt != nil,
		disabled: k.Edges.Owner.Disabled,
		readOnly: !slices.Contains(k.Scopes, ScopeWrite),
		checked:  now,
	}
	if k.ExpiresAt != nil {
		st.expiresAt = *k.ExpiresAt
	}
	for window, n := range map[string]*int{ratelimit.WindowMinute: k.RateLimitPerMinute, ratelimit.WindowHour: k.RateLimitPerHour} {
		if n != nil {
			if st.limits == nil {
				st.limits = map[string]int64{}
			}
			st.limits[window] = int64(*n)
		}
	}
	return st
}

// expired reports whether the key has passed its expiry at now.
func (st keyState) expired(now time.Time) bool {
	return !st.expiresAt.IsZero() && !now.Before(st.expiresAt)
}

// keyCache remembers key states for a short while, so that checking a token
// costs no database round trip on most requests while a revocation still
// takes effect within the recheck interval on every replica.
type keyCache struct {
	mu      sync.RWMutex
	ttl     time.Duration
	entries map[string]keyState
	// changed, if set, is told of every key forgotten: its state changed
	// on this server (revoked, limits, its user's role or disabled), and
	// what still runs with the old state (open streams) must check again.
	changed func(keyID string)
}

func newKeyCache(ttl time.Duration, changed func(keyID string)) *keyCache {
	return &keyCache{ttl: ttl, entries: map[string]keyState{}, changed: changed}
}

// get returns a key's state if it was read less than maxAge ago (and
// within the cache's ttl).
func (c *keyCache) get(keyID string, now time.Time, maxAge time.Duration) (keyState, bool) {
	c.mu.RLock()
	st, ok := c.entries[keyID]
	c.mu.RUnlock()
	if !ok || now.Sub(st.checked) >= min(c.ttl, maxAge) {
		return keyState{}, false
	}
	return st, true
}

func (c *keyCache) put(keyID string, st keyState) {
	c.mu.Lock()
	c.entries[keyID] = st
	c.mu.Unlock()
}

// forget drops a key's state after a change to it committed, so that the
// next check reads it anew, and tells changed.
func (c *keyCache) forget(keyID string) {
	c.mu.Lock()
	delete(c.entries, keyID)
	c.mu.Unlock()
	if c.changed != nil {
		c.changed(keyID)
	}
}
