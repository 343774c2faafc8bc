package rest

import (
	"encoding/json"
	"mime"
	"strings"

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

// graphqlRequestError is a refusal under application/graphql-response+json:
// no data entry, which the GraphQL-over-HTTP specification keeps for an
// operation that ran.
type graphqlRequestError struct {
	Errors []graphqlError `json:"errors"`
}

// The response media types of GraphQL over HTTP.
const (
	MediaJSON            = "application/json"
	MediaGraphQLResponse = "application/graphql-response+json"
)

// GraphQLMediaType chooses a GraphQL response's media type by the request's
// Accept header, as gqlgen's POST transport does: application/json when the
// header is absent or names it (or */*, application/*) before the GraphQL
// response type; application/graphql-response+json when it names that
// first, or neither.
func GraphQLMediaType(accept string) string {
	if accept == "" {
		return MediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", MediaJSON:
			return MediaJSON
		case MediaGraphQLResponse:
			return MediaGraphQLResponse
		}
	}
	return MediaGraphQLResponse
}

type graphqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// renderGraphQLError writes e as {"errors":[{message, extensions:{code,
// …details}}],"data":null}, or, to a client that accepts
// application/graphql-response+json, in that type without the data entry.
func renderGraphQLError(c *gin.Context, e *apperr.Error) {
	ext := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		ext[k] = v
	}
	ext["code"] = e.Code
	errs := []graphqlError{{Message: e.Message, Extensions: ext}}
	if GraphQLMediaType(c.GetHeader("Accept")) == MediaGraphQLResponse {
		b, _ := json.Marshal(graphqlRequestError{Errors: errs})
		c.Data(e.Status(), MediaGraphQLResponse, b)
		c.Abort()
		return
	}
	writeJSON(c, e.Status(), graphqlFailure{Errors: errs})
}

// Fail ends the request with err, rendered as on /v1, or GraphQL-shaped
// after GraphQLErrors; for failures of /graphql outside gqlgen (a method or
// media type it does not take).
func Fail(c *gin.Context, err error) {
	renderError(c, err)
}
