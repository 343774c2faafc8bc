package resource

import (
	"time"

	"github.com/acme/itemsvc/ent"
)

// APIKey is an API key as its owner and admins see it: never its hash. Key,
// the secret, is set only in the answer that created it: it is shown once.
type APIKey struct {
	ID     string   `json:"id"`
	UserID string   `json:"user_id"`
	Label  string   `json:"label"`
	Prefix string   `json:"prefix"`
	Scopes []string `json:"scopes"`
	// Key is the secret (sk_…), only in the answer to its creation.
	Key        string     `json:"key,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// RateLimitPerMinute and RateLimitPerHour are the key's own limits;
	// null: the server's defaults.
	RateLimitPerMinute *int `json:"rate_limit_per_minute"`
	RateLimitPerHour   *int `json:"rate_limit_per_hour"`
}

// NewAPIKey renders a key without its secret.
func NewAPIKey(k *ent.APIKey) APIKey {
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return APIKey{
		ID:                 k.ID,
		UserID:             k.UserID,
		Label:              k.Label,
		Prefix:             k.Prefix,
		Scopes:             scopes,
		CreatedAt:          k.CreatedAt.UTC(),
		LastUsedAt:         utc(k.LastUsedAt),
		ExpiresAt:          utc(k.ExpiresAt),
		RevokedAt:          utc(k.RevokedAt),
		RateLimitPerMinute: k.RateLimitPerMinute,
		RateLimitPerHour:   k.RateLimitPerHour,
	}
}

// NewAPIKeyWithSecret renders a key just made with its secret, for the one
// answer that may show it.
func NewAPIKeyWithSecret(k *ent.APIKey, secret string) APIKey {
	out := NewAPIKey(k)
	out.Key = secret
	return out
}

// NewAPIKeys renders a page of keys.
func NewAPIKeys(ks []*ent.APIKey) []APIKey {
	out := make([]APIKey, len(ks))
	for i, k := range ks {
		out[i] = NewAPIKey(k)
	}
	return out
}

// utc is t in UTC, nil for nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
