package service

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/viewer"
)

// The administration of users and keys (DESIGN §8). These functions hold
// the rules; ent privacy decides who may call them (admins, or the system:
// the CLI and first start).

// UserFilter selects users: by role, by disabled, by the start of the email
// (case-insensitive); the zero value selects everyone.
type UserFilter struct {
	Role        string
	Disabled    *bool
	EmailPrefix string
}

// Check checks the filter as ListUsers and FindUsers would: an unknown
// role, or an email prefix that is no part of an email, is VALIDATION_ERROR.
func (f UserFilter) Check() error { return f.apply(nil) }

// apply checks the filter and narrows q to it (q may be nil: only check).
func (f UserFilter) apply(q *ent.UserQuery) error {
	var where []predicate.User
	if f.Role != "" {
		r, err := parseRole(f.Role)
		if err != nil {
			return err
		}
		where = append(where, user.RoleEQ(r))
	}
	if f.Disabled != nil {
		where = append(where, user.Disabled(*f.Disabled))
	}
	if f.EmailPrefix != "" {
		if err := CheckFilterText("email", f.EmailPrefix); err != nil {
			return err
		}
		prefix, err := canonicalEmail(f.EmailPrefix)
		if err != nil {
			return err
		}
		where = append(where, user.EmailHasPrefix(prefix))
	}
	if q != nil {
		q.Where(where...)
	}
	return nil
}

// FindUsers returns the users the filter selects, oldest first.
func (s *Service) FindUsers(ctx context.Context, f UserFilter) ([]*ent.User, error) {
	q := s.db.User.Query()
	if err := f.apply(q); err != nil {
		return nil, err
	}
	us, err := q.Order(user.ByCreatedAt(), user.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return us, nil
}

// CreateUser makes a user; an email already taken (whatever its case) is
// VALIDATION_ERROR naming email, the user keeps it.
func (s *Service) CreateUser(ctx context.Context, email, name, role string) (*ent.User, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, apperr.Validation("name", "is required")
	}
	if v, ok := viewer.FromContext(ctx); ok && !v.Admin() {
		return nil, apperr.PermissionDenied("only admins may create users")
	}
	r := user.RoleUser
	if role != "" {
		if r, err = parseRole(role); err != nil {
			return nil, err
		}
	}
	var u *ent.User
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		taken, err := tx.User.Query().Where(user.Email(email)).Exist(ctx)
		if err != nil {
			return fmt.Errorf("find user: %w", err)
		}
		if taken {
			return apperr.Validation("email", "is already taken")
		}
		u, err = tx.User.Create().SetEmail(email).SetName(name).SetRole(r).Save(ctx)
		if ent.IsConstraintError(err) {
			return apperr.Validation("email", "is already taken")
		}
		if err != nil {
			return err
		}
		return s.auditUserCreated(ctx, tx, u)
	})
	if err != nil {
		return nil, err
	}
	return detach(ctx, u), nil
}

// auditUserCreated records u's creation in tx, whoever made it (an admin,
// the CLI, first start).
func (s *Service) auditUserCreated(ctx context.Context, tx *ent.Tx, u *ent.User) error {
	return s.recordAudit(ctx, tx, AuditUserCreated, u.ID, map[string]Change{
		"email":    {After: u.Email},
		"name":     {After: u.Name},
		"role":     {After: u.Role},
		"disabled": {After: u.Disabled},
	})
}

// UserChanges are the fields an admin may change on a user; nil leaves one.
type UserChanges struct {
	Name     *string
	Role     *string
	Disabled *bool
}

// UpdateUser changes a user given by id (user_…), or by email for the
// system (the CLI): an API caller names users by id only, on REST and
// GraphQL alike, and anything else is NOT_FOUND. The last enabled admin
// can be neither demoted nor disabled: VALIDATION_ERROR naming role or
// disabled. A disabled user's tokens stop within KeyRecheck on every
// replica (at once on this one).
func (s *Service) UpdateUser(ctx context.Context, idOrEmail string, c UserChanges) (*ent.User, error) {
	if _, ok := viewer.FromContext(ctx); ok && !strings.HasPrefix(idOrEmail, "user_") {
		return nil, apperr.NotFound("user")
	}
	var role user.Role
	if c.Role != nil {
		var err error
		if role, err = parseRole(*c.Role); err != nil {
			return nil, err
		}
	}
	var name string
	if c.Name != nil {
		if name = strings.TrimSpace(*c.Name); name == "" {
			return nil, apperr.Validation("name", "must not be empty")
		}
	}
	// A user (not an admin) may change their own name only; privacy shows
	// them no one else (NOT_FOUND), and the write runs as the system.
	write := ctx
	if v, ok := viewer.FromContext(ctx); ok && !v.Admin() {
		if c.Role != nil || c.Disabled != nil {
			return nil, apperr.PermissionDenied("only admins may change a user's role or disabled")
		}
		write = system(ctx)
	}
	var out *ent.User
	asked := ctx // the viewer, the audit record's actor, whoever writes
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		u, err := findUser(ctx, tx, idOrEmail)
		if err != nil {
			return err
		}
		ctx := write
		demoted := c.Role != nil && role != user.RoleAdmin && u.Role == user.RoleAdmin
		disabled := c.Disabled != nil && *c.Disabled && !u.Disabled
		if (demoted || disabled) && u.Role == user.RoleAdmin && !u.Disabled {
			field := "role"
			if !demoted {
				field = "disabled"
			}
			if err := lastAdminGuard(ctx, tx, u.ID, field); err != nil {
				return err
			}
		}
		up := u.Update()
		if c.Name != nil {
			up.SetName(name)
		}
		if c.Role != nil {
			up.SetRole(role)
		}
		if c.Disabled != nil {
			up.SetDisabled(*c.Disabled)
		}
		if out, err = up.Save(ctx); err != nil {
			return err
		}
		changes := map[string]Change{}
		if u.Name != out.Name {
			changes["name"] = Change{u.Name, out.Name}
		}
		if u.Role != out.Role {
			changes["role"] = Change{u.Role, out.Role}
		}
		if u.Disabled != out.Disabled {
			changes["disabled"] = Change{u.Disabled, out.Disabled}
		}
		return s.recordAudit(asked, tx, AuditUserUpdated, out.ID, changes)
	})
	if err != nil {
		return nil, err
	}
	s.forgetKeysOf(ctx, out.ID)
	return detach(ctx, out), nil
}

// lastAdminGuard refuses the change (of field) that would leave no enabled
// admin but id. On PostgreSQL it locks the enabled admins' rows, so that
// two admins demoting each other at once cannot both succeed; SQLite has
// one writer at a time.
func lastAdminGuard(ctx context.Context, tx *ent.Tx, id, field string) error {
	admins, err := tx.User.Query().
		Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).
		Modify(func(s *sql.Selector) {
			if s.Dialect() == dialect.Postgres {
				s.ForUpdate()
			}
		}).
		Select(user.FieldID).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("find admins: %w", err)
	}
	for _, a := range admins {
		if a != id {
			return nil
		}
	}
	return apperr.Validation(field, "the last enabled admin cannot be demoted or disabled")
}

// forgetKeysOf drops the cached states of a user's keys, so that a change
// of role or disabled holds on this replica's next request.
func (s *Service) forgetKeysOf(ctx context.Context, userID string) {
	ids, err := s.db.APIKey.Query().Where(apikey.UserID(userID)).IDs(system(ctx))
	if err != nil {
		s.log.WarnContext(ctx, "forget cached keys", "user_id", userID, "err", err)
		return
	}
	for _, id := range ids {
		s.keys.forget(id)
	}
}

// GetUser returns a user by id: admins any, a user themselves; anyone else
// NOT_FOUND, as for an unknown id.
func (s *Service) GetUser(ctx context.Context, id string) (*ent.User, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	u, err := s.db.User.Query().Where(user.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("user")
	}
	if err != nil {
		return nil, fmt.Errorf("get user: %w", err)
	}
	return u, nil
}

// findUser finds a user by id (user_…) or email: NOT_FOUND if none.
func findUser(ctx context.Context, tx *ent.Tx, idOrEmail string) (*ent.User, error) {
	q := tx.User.Query()
	if strings.HasPrefix(idOrEmail, "user_") {
		q.Where(user.ID(idOrEmail))
	} else {
		email, err := canonicalEmail(idOrEmail)
		if err != nil {
			return nil, err
		}
		q.Where(user.Email(email))
	}
	u, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("user")
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return u, nil
}

// FindKeys returns the API keys of the user with this email, or every key
// when email is empty, oldest first, each with its owner.
func (s *Service) FindKeys(ctx context.Context, email string) ([]*ent.APIKey, error) {
	q := s.db.APIKey.Query().WithOwner()
	if email != "" {
		email, err := canonicalEmail(email)
		if err != nil {
			return nil, err
		}
		q.Where(apikey.HasOwnerWith(user.Email(email)))
	}
	ks, err := q.Order(apikey.ByCreatedAt(), apikey.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return ks, nil
}

// parseRole checks a role: user or admin, else VALIDATION_ERROR naming role.
func parseRole(r string) (user.Role, error) {
	role := user.Role(r)
	if err := user.RoleValidator(role); err != nil {
		return "", apperr.Validation("role", "must be one of: user, admin")
	}
	return role, nil
}

// System returns ctx marked as work of the operator (the CLI): ent privacy
// lets it through, as it does first start's.
func System(ctx context.Context) context.Context { return system(ctx) }
