package service

import (
	"context"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/viewer"
)

// ReasonReadOnlyKey is details.reason of the refusal of a write made with a
// key that has only the read scope.
const ReasonReadOnlyKey = "read-only key"

// ReasonAdminReplay is details.reason of the refusal of an Idempotency-Key
// replay of an admin's request to a caller who is no longer an admin.
const ReasonAdminReplay = "admin replay"

// RequireWrite refuses a write by a viewer whose key lacks the write scope
// with 403 PERMISSION_DENIED. Every transport calls it before any write (REST
// on each method other than GET and HEAD, GraphQL on each mutation but
// login), so the answer does not depend on which write or how it is sent.
// The viewer comes from the cached key state: the check costs no query.
func RequireWrite(ctx context.Context) error {
	if v, ok := viewer.FromContext(ctx); ok && v.ReadOnly {
		e := apperr.PermissionDenied("this API key may only read: its scopes lack write")
		e.Details["reason"] = ReasonReadOnlyKey
		return e
	}
	return nil
}
