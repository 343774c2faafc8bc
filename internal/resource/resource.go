// Package resource holds the public JSON shape of each resource: what REST
// responses carry in data and what webhook events carry, so the two can never
// disagree. Timestamps are RFC 3339 in UTC.
package resource

import (
	"time"

	"github.com/acme/itemsvc/ent"
)

// Item is an item as clients see it.
type Item struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Status      string    `json:"status"`
	UserID      string    `json:"user_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// NewItem renders an ent item.
func NewItem(it *ent.Item) Item {
	return Item{
		ID:          it.ID,
		Name:        it.Name,
		Description: it.Description,
		Status:      string(it.Status),
		UserID:      it.UserID,
		CreatedAt:   it.CreatedAt.UTC(),
		UpdatedAt:   it.UpdatedAt.UTC(),
	}
}

// NewItems renders a page of ent items.
func NewItems(items []*ent.Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		out[i] = NewItem(it)
	}
	return out
}

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
