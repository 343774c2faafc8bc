package graph

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/rest"
)

// Routes are the paths this package serves.
const (
	Endpoint       = "/graphql"
	PlaygroundPath = "/playground"
)

// Mount serves h at /graphql on e, and GraphiQL at /playground when
// playgroundOn. authenticated is the REST chain (token check, rate limit):
// here it runs only for a request that carries an Authorization header, so
// that login works anonymously while a bad or expired token still fails
// with UNAUTHORIZED or TOKEN_EXPIRED; every failure of that chain is
// rendered GraphQL-shaped.
func Mount(e *gin.Engine, h http.Handler, playgroundOn bool, authenticated ...gin.HandlerFunc) {
	chain := []gin.HandlerFunc{rest.GraphQLErrors, rest.LimitBody, rest.ClientAddr}
	for _, m := range authenticated {
		chain = append(chain, whenAuthorized(m))
	}
	chain = append(chain, gin.WrapH(h))
	e.GET(Endpoint, chain...)
	e.POST(Endpoint, chain...)
	if playgroundOn {
		e.GET(PlaygroundPath, gin.WrapH(playground.Handler("itemsvc GraphQL", Endpoint,
			playground.WithStoragePrefix("itemsvc:"))))
	}
}

// whenAuthorized runs m only for a request with an Authorization header;
// gin moves on to the next handler when it returns without aborting.
func whenAuthorized(m gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.GetHeader("Authorization") != "" {
			m(c)
		}
	}
}
