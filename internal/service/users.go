package service

import (
	"context"
	"fmt"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/user"
)

// Me returns the viewer's own user.
func (s *Service) Me(ctx context.Context) (*ent.User, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.db.User.Get(ctx, v.UserID)
	if err != nil {
		return nil, fmt.Errorf("get viewer: %w", err)
	}
	return u, nil
}

// UserPage is one page of users and how many there are in all.
type UserPage struct {
	Users []*ent.User
	Total int
}

// ListUsers returns one page of the users the filter selects, oldest first
// (the order an admin's user picker keeps as users are added); admins only,
// like GraphQL's users.
func (s *Service) ListUsers(ctx context.Context, page, limit int, f UserFilter) (UserPage, error) {
	q, err := s.UserQuery(ctx)
	if err != nil {
		return UserPage{}, err
	}
	if err := f.apply(q); err != nil {
		return UserPage{}, err
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return UserPage{}, fmt.Errorf("count users: %w", err)
	}
	out := UserPage{Total: total, Users: []*ent.User{}}
	offset := (page - 1) * limit
	if offset >= total {
		return out, nil
	}
	out.Users, err = q.Order(user.ByCreatedAt(), user.ByID()).Offset(offset).Limit(limit).All(ctx)
	if err != nil {
		return UserPage{}, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}
