// Package enum spells ent's enums in GraphQL. ent keeps the values of the
// spec, in lower case (active, admin): the database stores them, and REST,
// webhooks and /v1/events show them as they are. In GraphQL every enum
// value is upper case (ACTIVE, ADMIN), as the schema's own enums are
// (CREATED, ASC): ent/entc.go writes ent's values into the schema upper
// case, and gqlgen.yml binds each of those enums to the pair of functions
// here, which turn one spelling into the other. No list of values is kept
// here: a value's GraphQL name is the value in upper case (Name), and ent's
// validator says which values there are.
//
// It is apart from package graph because the generated executor imports it
// and package graph imports the executor.
package enum

import (
	"fmt"
	"maps"
	"strings"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/user"
)

// MarshalItemStatus writes an item's status by its GraphQL name (ACTIVE).
func MarshalItemStatus(s item.Status) graphql.Marshaler { return itemStatus.marshal(s) }

// UnmarshalItemStatus reads an ItemStatus name (ACTIVE) as ent's value
// (active).
func UnmarshalItemStatus(v any) (item.Status, error) { return itemStatus.unmarshal(v) }

// MarshalUserRole writes a user's role by its GraphQL name (ADMIN).
func MarshalUserRole(r user.Role) graphql.Marshaler { return userRole.marshal(r) }

// UnmarshalUserRole reads a UserRole name (ADMIN) as ent's value (admin).
func UnmarshalUserRole(v any) (user.Role, error) { return userRole.unmarshal(v) }

// MarshalDeliveryState writes a webhook delivery's state by its GraphQL
// name (PENDING). DeliveryState is written by hand in graph/webhooks.graphqls
// (deliveries are not entgql's); enum_test holds its values to ent's.
func MarshalDeliveryState(s delivery.State) graphql.Marshaler { return deliveryState.marshal(s) }

// UnmarshalDeliveryState reads a DeliveryState name (PENDING) as ent's
// value (pending).
func UnmarshalDeliveryState(v any) (delivery.State, error) { return deliveryState.unmarshal(v) }

var (
	itemStatus    = &spelling[item.Status]{name: "ItemStatus", valid: item.StatusValidator}
	userRole      = &spelling[user.Role]{name: "UserRole", valid: user.RoleValidator}
	deliveryState = &spelling[delivery.State]{name: "DeliveryState", valid: delivery.StateValidator}
)

// Name is the GraphQL name of ent's enum value v: v in upper case. ent/entc.go
// writes the schema's values by the same rule and refuses a value it would
// not give back (one that is not lower case, or not a GraphQL name in upper
// case).
func Name[T ~string](v T) string { return strings.ToUpper(string(v)) }

// spelling maps the values of one ent enum to their GraphQL names and back.
type spelling[T ~string] struct {
	// name is the GraphQL enum's, for errors.
	name string
	// valid is ent's validator of the enum: nil for a value of it.
	valid func(T) error
	// names holds the marshaller of each valid value met so far, added on
	// first use and replaced whole (copy on write), so that a page of items
	// marshals its statuses without allocating.
	names atomic.Pointer[map[T]graphql.Marshaler]
}

// marshal writes v's name. A value ent does not know is written upper case
// too, uncached: the database is the only source of one.
func (s *spelling[T]) marshal(v T) graphql.Marshaler {
	if m := s.names.Load(); m != nil {
		if out, ok := (*m)[v]; ok {
			return out
		}
	}
	out := graphql.MarshalString(Name(v))
	if s.valid(v) != nil {
		return out
	}
	for {
		old := s.names.Load()
		next := map[T]graphql.Marshaler{v: out}
		if old != nil {
			maps.Copy(next, *old)
		}
		if s.names.CompareAndSwap(old, &next) {
			return out
		}
	}
}

// unmarshal reads a name as ent's value. The validator of the operation has
// refused every name the schema does not list before this runs; what it lets
// through maps to a value ent's validator accepts.
func (s *spelling[T]) unmarshal(v any) (T, error) {
	name, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %T", s.name, v)
	}
	val := T(strings.ToLower(name))
	if Name(val) != name || s.valid(val) != nil {
		return "", fmt.Errorf("%s is not a valid %s", name, s.name)
	}
	return val, nil
}
