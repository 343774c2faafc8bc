// Package viewer carries the authenticated caller through a context, so that
// ent privacy rules, the service layer and both transports agree on who is
// asking without passing it around by hand.
package viewer

import "context"

// Role is what a viewer may do: see and change their own data, or everything.
type Role string

// The roles of the contract (DESIGN §2).
const (
	RoleUser  Role = "user"
	RoleAdmin Role = "admin"
)

// Viewer is the caller of one request: the user behind an access token and the
// API key that token was issued for.
type Viewer struct {
	UserID string
	KeyID  string
	Role   Role
	// ReadOnly marks a key without the write scope: every write is
	// refused with PERMISSION_DENIED, on every transport.
	ReadOnly bool
	// Limits are the key's own rate limits by window ("minute", "hour"),
	// from its cached state; nil or a window absent: the server's. Shared
	// by every request of the key: never changed.
	Limits map[string]int64
}

// Admin reports whether the viewer may see and change every user's data.
func (v Viewer) Admin() bool { return v.Role == RoleAdmin }

type ctxKey struct{}

// NewContext returns a copy of ctx that carries v.
func NewContext(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// FromContext returns the viewer of ctx, and false when the request is anonymous.
func FromContext(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(ctxKey{}).(Viewer)
	return v, ok
}
