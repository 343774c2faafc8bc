// Package graph is the GraphQL API's schema (ent's generated half and the
// hand-written half) and its thin resolvers over the service layer, with
// what the resolvers use: node lookup, totals from the item counters, page
// bounds and the itemEvents stream. The server that carries them (its
// transports, limits and error presenter) is package graph/server.
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
