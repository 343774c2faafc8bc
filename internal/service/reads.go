package service

import (
	"context"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
)

// Reader returns the ent client for a viewer's read-only queries (the GraphQL
// connections, node lookups and edges). Ent privacy holds those queries to
// the same rules as the service's own; this only makes an anonymous caller
// UNAUTHORIZED rather than a privacy denial.
func (s *Service) Reader(ctx context.Context) (*ent.Client, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	return s.db, nil
}

// reads is the client the service's own reads go through: the request's
// transaction under Idempotent, so that the answer of a change still
// uncommitted (createWebhook { deliveries } with an Idempotency-Key) reads
// what that change wrote, as everything after it will; the database
// otherwise. Outside that transaction the new row is not visible yet, and
// the read would fail the request and so roll the change back.
func (s *Service) reads(ctx context.Context) *ent.Client {
	if a, ok := ctx.Value(ambientTxKey{}).(*ambientTx); ok {
		return a.tx.Client()
	}
	return s.db
}

// UserQuery returns a query over all users, for admins only: anyone else is
// PERMISSION_DENIED rather than a silently filtered list of one.
func (s *Service) UserQuery(ctx context.Context) (*ent.UserQuery, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if !v.Admin() {
		return nil, apperr.PermissionDenied("only admins may list users")
	}
	return s.db.User.Query(), nil
}
