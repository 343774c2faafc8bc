// Package resource holds the public JSON shape of each resource: what REST
// responses carry in data and what webhook events carry, so the two can never
// disagree. Timestamps are RFC 3339 in UTC. The shapes of the resources
// clients write (entgql.Mutations in ent/schema) are generated from their
// schema into resources.generated.go.
package resource

import (
	"time"

	"github.com/acme/itemsvc/ent"
)

// User is a user as clients see it.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NewUser renders an ent user.
func NewUser(u *ent.User) User {
	return User{
		ID:        u.ID,
		Email:     u.Email,
		Name:      u.Name,
		Role:      string(u.Role),
		Disabled:  u.Disabled,
		CreatedAt: u.CreatedAt.UTC(),
		UpdatedAt: u.UpdatedAt.UTC(),
	}
}
