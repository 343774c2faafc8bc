package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/auth"
)

// NewKey is a freshly made API key; Key is shown once and never stored.
type NewKey struct {
	Key    string
	KeyID  string
	UserID string
}

// CreateKey makes an API key for the user with this email, creating the user
// (with name and role) if there is none. It is an operator's action (the CLI,
// first start), not an API call, and runs as the system.
func (s *Service) CreateKey(ctx context.Context, email, name string, admin bool) (NewKey, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return NewKey{}, err
	}
	name = strings.TrimSpace(name)
	role := user.RoleUser
	if admin {
		role = user.RoleAdmin
	}
	var out NewKey
	err = s.withTx(system(ctx), func(tx *ent.Tx) error {
		u, err := tx.User.Query().Where(user.Email(email)).Only(system(ctx))
		switch {
		case ent.IsNotFound(err):
			if name == "" {
				return apperr.Validation("name", "is required for a new user")
			}
			u, err = tx.User.Create().SetEmail(email).SetName(name).SetRole(role).Save(system(ctx))
			if err != nil {
				return fmt.Errorf("create user: %w", err)
			}
			if err := s.auditUserCreated(ctx, tx, u); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("find user: %w", err)
		case admin && u.Role != user.RoleAdmin:
			before := u.Role
			if u, err = u.Update().SetRole(role).Save(system(ctx)); err != nil {
				return fmt.Errorf("promote user: %w", err)
			}
			if err := s.recordAudit(ctx, tx, AuditUserUpdated, u.ID, map[string]Change{"role": {Before: before, After: u.Role}}); err != nil {
				return err
			}
		}
		k, err := s.insertKey(ctx, tx, u.ID, keyFields{})
		if err != nil {
			return err
		}
		out = NewKey{Key: k.Secret, KeyID: k.ID, UserID: u.ID}
		return nil
	})
	return out, err
}

// RevokeKey revokes a key given by its id (key_…) or by the key itself. Its
// tokens stop working at once on this process and within KeyRecheck elsewhere.
func (s *Service) RevokeKey(ctx context.Context, idOrKey string) (string, error) {
	ctx = system(ctx)
	var id string
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		q := tx.APIKey.Query()
		if strings.HasPrefix(idOrKey, "key_") {
			q.Where(apikey.ID(idOrKey))
		} else {
			q.Where(apikey.KeyHash(auth.HashKey(idOrKey)))
		}
		k, err := q.Only(ctx)
		if ent.IsNotFound(err) {
			return apperr.NotFound("API key")
		}
		if err != nil {
			return fmt.Errorf("find key: %w", err)
		}
		if k, err = s.revokeKey(ctx, tx, k); err != nil {
			return err
		}
		id = k.ID
		return nil
	})
	if err != nil {
		return "", err
	}
	s.keys.forget(id)
	return id, nil
}

// bootstrapLock is the PostgreSQL advisory lock Bootstrap holds for its
// transaction, so that replicas starting together take turns.
const bootstrapLock int64 = 0x69746d7366697273

// FirstAdmin is who Bootstrap makes the first admin: the zero value is
// admin@localhost with a new key, returned to print once; with Email and Key
// (BOOTSTRAP_ADMIN_EMAIL and the key of BOOTSTRAP_ADMIN_KEY_FILE, which an
// operator made and keeps in a Secret) it is that user with that key, and
// nothing is printed.
type FirstAdmin struct {
	Email string
	Key   string
}

// Bootstrap makes the first admin and its key when the database has no user
// yet, and reports whether it did and the key to print once (none when the
// key was given); on any later start it does nothing. The check and the
// creation are one transaction that holds the database's write lock from
// its start (SQLite: BEGIN IMMEDIATE, the driver's _txlock) or an advisory
// lock (PostgreSQL): however many processes start together on an empty
// database, one makes the admin and its key, and the others then find a
// user and do nothing.
func (s *Service) Bootstrap(ctx context.Context, first FirstAdmin) (key string, created bool, err error) {
	ctx = system(ctx)
	email := "admin@localhost"
	if first.Email != "" {
		var err error
		if email, err = normalizeEmail(first.Email); err != nil {
			return "", false, fmt.Errorf("BOOTSTRAP_ADMIN_EMAIL: %w", err)
		}
		if !auth.LooksLikeKey(first.Key) {
			return "", false, errors.New("BOOTSTRAP_ADMIN_KEY_FILE: want a key of sk_live_ and 32 lowercase letters or digits")
		}
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		if s.opts.Dialect == "postgres" {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", bootstrapLock); err != nil {
				return fmt.Errorf("take the first-start lock: %w", err)
			}
		}
		switch n, err := tx.User.Query().Count(ctx); {
		case err != nil:
			return fmt.Errorf("count users: %w", err)
		case n > 0:
			return nil
		}
		u, err := tx.User.Create().SetEmail(email).SetName("Admin").SetRole(user.RoleAdmin).Save(ctx)
		if err != nil {
			return fmt.Errorf("create the admin: %w", err)
		}
		if err := s.auditUserCreated(ctx, tx, u); err != nil {
			return err
		}
		secret := first.Key
		if secret == "" {
			secret = auth.NewKey(s.opts.KeyPrefix)
		}
		if _, err := s.insertSecret(ctx, tx, secret, u.ID, keyFields{}); err != nil {
			return fmt.Errorf("create the admin's key: %w", err)
		}
		created = true
		if first.Key == "" {
			key = secret // to print once
		}
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("bootstrap admin: %w", err)
	}
	return key, created, nil
}

// The scopes of an API key (DESIGN §8).
const (
	// ScopeRead lets a key's tokens read: REST GET, GraphQL queries and
	// subscriptions.
	ScopeRead = "read"
	// ScopeWrite lets a key's tokens change things: every other REST
	// method and every GraphQL mutation.
	ScopeWrite = "write"
)
