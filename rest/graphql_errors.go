package rest

import (
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
)

// graphqlErrorsKey marks a request whose failures are rendered GraphQL-shaped.
const graphqlErrorsKey = "graphql_errors"

// GraphQLErrors makes every failure rendered for this request by the shared
// middleware (authentication, rate limits, body limits) come out as a GraphQL
// response, with the same HTTP status and code as on /v1. It goes first on
// the /graphql route.
func GraphQLErrors(c *gin.Context) {
	c.Set(graphqlErrorsKey, true)
	c.Next()
}

// LimitBody bounds a request body as on /v1 (PAYLOAD_TOO_LARGE past
// MaxBodyBytes), for routes mounted beside it.
func LimitBody(c *gin.Context) {
	limitBody(c)
}

type graphqlFailure struct {
	Errors []graphqlError `json:"errors"`
	Data   any            `json:"data"`
}

type graphqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// renderGraphQLError writes e as {"errors":[{message, extensions:{code,
// …details}}],"data":null}.
func renderGraphQLError(c *gin.Context, e *apperr.Error) {
	ext := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		ext[k] = v
	}
	ext["code"] = e.Code
	writeJSON(c, e.Status(), graphqlFailure{Errors: []graphqlError{{Message: e.Message, Extensions: ext}}})
}

// Fail ends the request with err, rendered as on /v1, or GraphQL-shaped
// after GraphQLErrors; for failures of /graphql outside gqlgen (a method or
// media type it does not take).
func Fail(c *gin.Context, err error) {
	renderError(c, err)
}
