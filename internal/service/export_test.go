package service

import (
	"context"

	"github.com/acme/itemsvc/ent"
)

// AuditInTx writes one audit record in a transaction that then ends with
// fail: committed when fail is nil, rolled back otherwise (for tests).
func (s *Service) AuditInTx(ctx context.Context, action AuditAction, target string, changes map[string]Change, fail error) error {
	return s.withTx(ctx, func(tx *ent.Tx) error {
		if err := s.recordAudit(ctx, tx, action, target, changes); err != nil {
			return err
		}
		return fail
	})
}
