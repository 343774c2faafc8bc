package service

import (
	"context"

	"github.com/acme/itemsvc/internal/ratelimit"
)

// LoginLimiter bounds failed logins per client address, against key
// guessing. Check looks without spending; Spend counts one failure.
type LoginLimiter interface {
	Check(ctx context.Context, addr string) ratelimit.Decision
	Spend(ctx context.Context, addr string)
}

type clientAddrKey struct{}

// WithClientAddr returns a copy of ctx that carries the caller's network
// address, as the transport determined it (trusted proxies only).
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// clientAddr is the caller's address, or "" when the transport gave none.
func clientAddr(ctx context.Context) string {
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	return addr
}
