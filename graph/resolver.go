// Package graph is the GraphQL API at /graphql: the schema (ent's generated
// half and the hand-written half), thin resolvers over the service layer, and
// the server with its error presenter and limits.
package graph

import (
	"github.com/acme/itemsvc/internal/service"
)

// Resolver is the one place dependencies are injected into the resolvers.
type Resolver struct {
	svc *service.Service
}

// NewResolver returns the root resolver over the service layer.
func NewResolver(svc *service.Service) *Resolver {
	return &Resolver{svc: svc}
}
