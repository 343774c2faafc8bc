// Package graph is the GraphQL API at /graphql: the schema (ent's generated
// half and the hand-written half), thin resolvers over the service layer, and
// the server with its error presenter and limits.
package graph

import (
	"github.com/acme/itemsvc/internal/service"
)

// Resolver is the one place dependencies are injected into the resolvers.
//
// Reads of connections, nodes and edges go to the ent client the service
// hands out (Service.Reader): ent privacy holds them to the viewer's rows,
// and entgql's field collection loads nested fields without N+1 queries.
// item, me and every mutation call the service functions REST calls, so
// that the codes match (403 against 404 is decided there); the service opens
// its own transaction for each change, so mutations are not also wrapped in
// entgql.Transactioner.
type Resolver struct {
	svc *service.Service
}

// NewResolver returns the root resolver over the service layer.
func NewResolver(svc *service.Service) *Resolver {
	return &Resolver{svc: svc}
}
