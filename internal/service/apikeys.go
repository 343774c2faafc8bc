package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/viewer"
)

// The API keys API (DESIGN §8): every user manages their own keys, an
// admin anyone's. ent privacy shows a user only their own keys, so another
// user's key is NOT_FOUND as an unknown one is; the writes run as the
// system once the service has found the key through the viewer.

// Bounds of an API key's fields.
const (
	MaxKeyLabelLen = 100
	// MaxKeyRateLimit bounds a key's own rate limits (per minute and per
	// hour): whole numbers from 1 to this.
	MaxKeyRateLimit = 1_000_000
)

// KeyScopes are the scopes a key may have, in their canonical order; a new
// key has them all unless it asks for fewer (or the key making it has
// fewer: see within).
var KeyScopes = []string{ScopeRead, ScopeWrite}

// DefaultMaxKeysPerUser is the most active keys one user may hold by the
// API's creates when Options.MaxKeysPerUser is 0 (MAX_KEYS_PER_USER's
// default).
const DefaultMaxKeysPerUser = 20

// KeyInput is a new API key: every field is optional (nil: absent). UserID
// names another owner than the viewer, which only admins may.
type KeyInput struct {
	Label     *string
	Scopes    *[]string
	ExpiresAt *time.Time
	UserID    *string
}

// LimitChange is one rate limit of an update: Set false leaves it as it is;
// Set with a nil Value returns it to the server's default.
type LimitChange struct {
	Set   bool
	Value *int
}

// KeyChanges are what an update of a key may change: the label (nil:
// unchanged), and, for admins, the key's own rate limits.
type KeyChanges struct {
	Label              *string
	RateLimitPerMinute LimitChange
	RateLimitPerHour   LimitChange
}

// KeyListParams select one page of a user's keys, newest first: the
// viewer's own when UserID is "".
type KeyListParams struct {
	UserID string
	Limit  int
	After  *Keyset
}

// KeyPage is one page of keys and the count of all the user's keys.
type KeyPage struct {
	Keys  []*ent.APIKey
	Total int
	// More reports keys after the page.
	More bool
}

// CreatedKey is a key just made, with its secret: shown now, never again.
type CreatedKey struct {
	*ent.APIKey
	Secret string
}

// keyFields are what a new key is made with. Scopes nil: every scope;
// ExpiresAt nil: never; a limit nil: the server's.
type keyFields struct {
	Label              string
	Scopes             []string
	ExpiresAt          *time.Time
	RateLimitPerMinute *int
	RateLimitPerHour   *int
}

// normalize checks the fields present, naming the first bad one; the
// scopes stay nil when absent (their default depends on who makes the key).
func (in *KeyInput) normalize(now time.Time) (keyFields, error) {
	var f keyFields
	var err error
	if f.Label, err = keyLabel(in.Label); err != nil {
		return keyFields{}, err
	}
	if in.Scopes != nil {
		if f.Scopes, err = checkScopes(*in.Scopes); err != nil {
			return keyFields{}, err
		}
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return keyFields{}, apperr.Validation("expires_at", "must be in the future")
	}
	f.ExpiresAt = in.ExpiresAt
	return f, nil
}

// within holds a new key to parent, the key whose token makes it, so that
// no key derived from another outranks it (DESIGN §10), whoever the new
// key is for: its scopes default to the parent's and may not add one the
// parent lacks; its expiry defaults to the parent's and may not be later;
// and it carries the parent's own rate limits, which only an admin sets
// or changes, so that a user cannot shed a limit by making a new key.
func (f keyFields) within(parent *ent.APIKey) (keyFields, error) {
	if f.Scopes == nil {
		f.Scopes = parent.Scopes
	}
	for _, s := range f.Scopes {
		if !slices.Contains(parent.Scopes, s) {
			return keyFields{}, apperr.Validation("scopes",
				fmt.Sprintf("may not include %s: the key making this one lacks it, and a key gives no more than it has", s))
		}
	}
	if end := parent.ExpiresAt; end != nil {
		switch {
		case f.ExpiresAt == nil:
			f.ExpiresAt = end
		case f.ExpiresAt.After(*end):
			return keyFields{}, apperr.Validation("expires_at",
				fmt.Sprintf("may not be later than %s, when the key making this one expires", end.UTC().Format(time.RFC3339Nano)))
		}
	}
	f.RateLimitPerMinute, f.RateLimitPerHour = parent.RateLimitPerMinute, parent.RateLimitPerHour
	return f, nil
}

// keyLabel is a key's label as sent, trimmed and checked; "" when absent.
func keyLabel(in *string) (string, error) {
	if in == nil {
		return "", nil
	}
	label := strings.TrimSpace(*in)
	if err := checkText("label", label, MaxKeyLabelLen); err != nil {
		return "", err
	}
	return label, nil
}

// checkScopes refuses an empty list or an unknown scope, and returns the
// scopes in canonical order without duplicates.
func checkScopes(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, apperr.Validation("scopes", "must name at least one scope: read, write")
	}
	for _, s := range in {
		if !slices.Contains(KeyScopes, s) {
			return nil, apperr.Validation("scopes", "each must be one of: read, write")
		}
	}
	out := make([]string, 0, len(KeyScopes))
	for _, s := range KeyScopes {
		if slices.Contains(in, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// checkLimit refuses a rate limit outside 1..MaxKeyRateLimit; field is the
// request's name of it.
func checkLimit(field string, c LimitChange) error {
	if c.Set && c.Value != nil && (*c.Value < 1 || *c.Value > MaxKeyRateLimit) {
		return apperr.Validation(field, fmt.Sprintf("must be a whole number from 1 to %d, or null for the server's default", MaxKeyRateLimit))
	}
	return nil
}

// ListAPIKeys returns one page of a user's keys, newest first: the
// viewer's own, or, for an admin, those of p.UserID. A user naming anyone
// else gets NOT_FOUND, as for an unknown user.
func (s *Service) ListAPIKeys(ctx context.Context, p KeyListParams) (KeyPage, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return KeyPage{}, err
	}
	owner, err := s.keyOwner(ctx, s.reads(ctx), v, p.UserID)
	if err != nil {
		return KeyPage{}, err
	}
	q := s.reads(ctx).APIKey.Query().Where(apikey.UserID(owner))
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return KeyPage{}, fmt.Errorf("count keys: %w", err)
	}
	if k := p.After; k != nil {
		q.Where(k.older())
	}
	rows, err := q.
		Order(apikey.ByCreatedAt(sql.OrderDesc()), apikey.ByID(sql.OrderDesc())).
		Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return KeyPage{}, fmt.Errorf("list keys: %w", err)
	}
	out := KeyPage{Total: total}
	out.Keys, out.More = cut(rows, p.Limit)
	return out, nil
}

// keyOwner is the user whose keys a request names: the viewer when id is
// "" or theirs; another user only for an admin, and only one that exists.
func (s *Service) keyOwner(ctx context.Context, c *ent.Client, v viewer.Viewer, id string) (string, error) {
	if id == "" || id == v.UserID {
		return v.UserID, nil
	}
	if !v.Admin() || !pulid.Valid("user_", id) {
		return "", apperr.NotFound("user")
	}
	ok, err := c.User.Query().Where(user.ID(id)).Exist(ctx)
	if err != nil {
		return "", fmt.Errorf("find user: %w", err)
	}
	if !ok {
		return "", apperr.NotFound("user")
	}
	return id, nil
}

// GetAPIKey returns a key: the viewer's own, or anyone's for an admin;
// another user's is NOT_FOUND, as an unknown id is.
func (s *Service) GetAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	return findAPIKey(ctx, s.reads(ctx), id)
}

// findAPIKey reads a key through c as the viewer sees it (ent privacy).
func findAPIKey(ctx context.Context, c *ent.Client, id string) (*ent.APIKey, error) {
	if !pulid.Valid("key_", id) {
		return nil, apperr.NotFound("API key")
	}
	k, err := c.APIKey.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("API key")
	}
	if err != nil {
		return nil, fmt.Errorf("get key: %w", err)
	}
	return k, nil
}

// CreateAPIKey makes a key for the viewer, or for in.UserID (admins only:
// PERMISSION_DENIED for anyone else naming another user; NOT_FOUND for an
// unknown one). A key made with a key's token is held to that key
// (keyFields.within), and the owner to MaxKeysPerUser active keys
// (checkKeyCap). The answer carries the secret: show it now, never again.
func (s *Service) CreateAPIKey(ctx context.Context, in KeyInput) (CreatedKey, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return CreatedKey{}, err
	}
	now := time.Now()
	f, err := in.normalize(now)
	if err != nil {
		return CreatedKey{}, err
	}
	owner := v.UserID
	if in.UserID != nil && *in.UserID != v.UserID {
		if !v.Admin() {
			return CreatedKey{}, apperr.PermissionDenied("only admins may create keys for other users")
		}
		owner = *in.UserID
	}
	var out CreatedKey
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		if _, err := s.keyOwner(ctx, tx.Client(), v, owner); err != nil {
			return err
		}
		if v.KeyID != "" {
			parent, err := parentKey(ctx, tx, v.KeyID, now)
			if err != nil {
				return err
			}
			if f, err = f.within(parent); err != nil {
				return err
			}
		}
		if err := s.checkKeyCap(ctx, tx, owner, now); err != nil {
			return err
		}
		out, err = s.insertKey(ctx, tx, owner, f)
		return err
	})
	if err != nil {
		return CreatedKey{}, err
	}
	out.APIKey = detach(ctx, out.APIKey)
	return out, nil
}

// parentKey reads the key whose token makes a new key, as it is now in
// tx: revoked or expired since the token check let the request in, it
// makes nothing, with the token check's answers.
func parentKey(ctx context.Context, tx *ent.Tx, id string, now time.Time) (*ent.APIKey, error) {
	k, err := tx.APIKey.Query().Where(apikey.ID(id)).Only(system(ctx))
	switch {
	case ent.IsNotFound(err):
		return nil, apperr.Unauthorized("the access token's API key has been revoked")
	case err != nil:
		return nil, fmt.Errorf("find the key making a key: %w", err)
	case k.RevokedAt != nil:
		return nil, apperr.Unauthorized("the access token's API key has been revoked")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, apperr.New(apperr.CodeTokenExpired, "the access token's API key has expired")
	}
	return k, nil
}

// checkKeyCap refuses a new key of userID when they already hold
// MaxKeysPerUser active keys (neither revoked nor expired), with
// VALIDATION_ERROR naming user_id, the owner. On PostgreSQL it first locks
// the owner's row until tx ends, so that concurrent creates for one user
// count in turn and cannot pass the cap together; SQLite has one writer
// at a time. The operator's commands (CreateKey, Bootstrap) do not call
// it: they are the way back in for a user at the cap.
func (s *Service) checkKeyCap(ctx context.Context, tx *ent.Tx, userID string, now time.Time) error {
	maxKeys := s.opts.MaxKeysPerUser
	if maxKeys < 0 {
		return nil
	}
	ctx = system(ctx)
	_, err := tx.User.Query().Where(user.ID(userID)).
		Modify(func(s *sql.Selector) {
			if s.Dialect() == dialect.Postgres {
				s.ForUpdate()
			}
		}).
		Select(user.FieldID).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("lock the key owner: %w", err)
	}
	n, err := tx.APIKey.Query().
		Where(apikey.UserID(userID), apikey.RevokedAtIsNil(),
			apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(now.UTC()))).
		Count(ctx)
	if err != nil {
		return fmt.Errorf("count active keys: %w", err)
	}
	if n < maxKeys {
		return nil
	}
	e := apperr.Validation("user_id", fmt.Sprintf(
		"already has %d active API keys, the most one user may hold (MAX_KEYS_PER_USER): revoke one first; revoked and expired keys do not count", maxKeys))
	e.Details["limit"] = maxKeys
	return e
}

// insertKey makes a key of userID with f in tx, as the system (ent privacy
// lets only admins write keys; the caller has checked who may), and records
// key.created in tx. The one place a key is made, for the API, the CLI and
// first start alike; the secret is never recorded.
func (s *Service) insertKey(ctx context.Context, tx *ent.Tx, userID string, f keyFields) (CreatedKey, error) {
	return s.insertSecret(ctx, tx, auth.NewKey(s.opts.KeyPrefix), userID, f)
}

// insertSecret is insertKey with the secret given: a first admin's key an
// operator made (BOOTSTRAP_ADMIN_KEY_FILE).
func (s *Service) insertSecret(ctx context.Context, tx *ent.Tx, secret, userID string, f keyFields) (CreatedKey, error) {
	if f.Scopes == nil {
		f.Scopes = KeyScopes
	}
	create := tx.APIKey.Create().
		SetUserID(userID).
		SetKeyHash(auth.HashKey(secret)).
		SetPrefix(auth.DisplayPrefix(secret)).
		SetLabel(f.Label).
		SetScopes(f.Scopes).
		SetNillableRateLimitPerMinute(f.RateLimitPerMinute).
		SetNillableRateLimitPerHour(f.RateLimitPerHour)
	if f.ExpiresAt != nil {
		create.SetExpiresAt(f.ExpiresAt.UTC())
	}
	k, err := create.Save(system(ctx))
	if err != nil {
		return CreatedKey{}, fmt.Errorf("create key: %w", err)
	}
	changes := map[string]Change{
		"user_id": {After: k.UserID},
		"label":   {After: k.Label},
		"scopes":  {After: k.Scopes},
	}
	if k.ExpiresAt != nil {
		changes["expires_at"] = Change{After: k.ExpiresAt.UTC()}
	}
	if k.RateLimitPerMinute != nil {
		changes["rate_limit_per_minute"] = Change{After: *k.RateLimitPerMinute}
	}
	if k.RateLimitPerHour != nil {
		changes["rate_limit_per_hour"] = Change{After: *k.RateLimitPerHour}
	}
	if err := s.recordAudit(ctx, tx, AuditKeyCreated, k.ID, changes); err != nil {
		return CreatedKey{}, err
	}
	showOnce(ctx, secret)
	return CreatedKey{APIKey: k, Secret: secret}, nil
}

// UpdateAPIKey changes a key's label (its owner or an admin) and its own
// rate limits (admins only: PERMISSION_DENIED for anyone else who sends
// them, even null). A change of limits holds on this replica's next
// request and within KeyRecheck on the others.
func (s *Service) UpdateAPIKey(ctx context.Context, id string, c KeyChanges) (*ent.APIKey, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	label, err := keyLabel(c.Label)
	if err != nil {
		return nil, err
	}
	if (c.RateLimitPerMinute.Set || c.RateLimitPerHour.Set) && !v.Admin() {
		return nil, apperr.PermissionDenied("only admins may change a key's rate limits")
	}
	if err := checkLimit("rate_limit_per_minute", c.RateLimitPerMinute); err != nil {
		return nil, err
	}
	if err := checkLimit("rate_limit_per_hour", c.RateLimitPerHour); err != nil {
		return nil, err
	}
	var out *ent.APIKey
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		k, err := findAPIKey(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		up := k.Update()
		if c.Label != nil {
			up.SetLabel(label)
		}
		setLimit(c.RateLimitPerMinute, up.SetRateLimitPerMinute, up.ClearRateLimitPerMinute)
		setLimit(c.RateLimitPerHour, up.SetRateLimitPerHour, up.ClearRateLimitPerHour)
		out, err = up.Save(system(ctx))
		if err != nil {
			return fmt.Errorf("update key: %w", err)
		}
		if changes := auditedKeyChanges(k, out); len(changes) > 0 {
			return s.recordAudit(ctx, tx, AuditKeyUpdated, out.ID, changes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.keys.forget(out.ID)
	return detach(ctx, out), nil
}

// auditedKeyChanges are the fields an update changed, for the audit trail.
func auditedKeyChanges(before, after *ent.APIKey) map[string]Change {
	changes := map[string]Change{}
	if before.Label != after.Label {
		changes["label"] = Change{Before: before.Label, After: after.Label}
	}
	for field, v := range map[string][2]*int{
		"rate_limit_per_minute": {before.RateLimitPerMinute, after.RateLimitPerMinute},
		"rate_limit_per_hour":   {before.RateLimitPerHour, after.RateLimitPerHour},
	} {
		if (v[0] == nil) != (v[1] == nil) || v[0] != nil && *v[0] != *v[1] {
			changes[field] = Change{Before: v[0], After: v[1]}
		}
	}
	return changes
}

// setLimit applies one limit change through the update's setter or clearer.
func setLimit[U any](c LimitChange, set func(int) U, clear func() U) {
	switch {
	case !c.Set:
	case c.Value == nil:
		clear()
	default:
		set(*c.Value)
	}
}

// RevokeAPIKey revokes a key: the viewer's own, or anyone's for an admin
// (another user's: NOT_FOUND). Revoking a revoked key changes nothing and
// succeeds. Its tokens stop at once on this replica and within KeyRecheck
// on the others.
func (s *Service) RevokeAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	var out *ent.APIKey
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		k, err := findAPIKey(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		out, err = s.revokeKey(ctx, tx, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.keys.forget(out.ID)
	return detach(ctx, out), nil
}

// revokeKey sets the revocation time of k in tx, as the system, and
// records key.revoked, unless it is revoked already (then nothing changes
// and nothing is recorded): the one place a key is revoked, for the API and
// the CLI alike. The caller drops the key from the cache once tx commits.
func (s *Service) revokeKey(ctx context.Context, tx *ent.Tx, k *ent.APIKey) (*ent.APIKey, error) {
	if k.RevokedAt != nil {
		return k, nil
	}
	k, err := tx.APIKey.UpdateOne(k).SetRevokedAt(time.Now().UTC()).Save(system(ctx))
	if err != nil {
		return nil, fmt.Errorf("revoke key: %w", err)
	}
	changes := map[string]Change{"revoked_at": {After: k.RevokedAt.UTC()}}
	if err := s.recordAudit(ctx, tx, AuditKeyRevoked, k.ID, changes); err != nil {
		return nil, err
	}
	return k, nil
}
