package service

import (
	"context"
	"fmt"

	"github.com/acme/itemsvc/ent"
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
