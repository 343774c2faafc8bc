package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
)

// graphqlErrorsKey marks a request whose failures are rendered GraphQL-shaped.
const graphqlErrorsKey = "graphql_errors"

// unavailableRetryAfter is the Retry-After of a 503, in seconds: long enough
// for a restarted database or a freed disk, short enough not to idle.
const unavailableRetryAfter = "5"

// GraphQLErrors makes every failure rendered for this request by the shared
// middleware (authentication, rate limits, body limits) come out as a GraphQL
// response, with the same HTTP status and code as on /v1. It goes first on
// the /graphql route.
func GraphQLErrors(c *gin.Context) {
	c.Set(graphqlErrorsKey, true)
	c.Next()
}

// Fail ends the request with err: the failure envelope, or a GraphQL
// response after GraphQLErrors. Errors the client did not cause are logged
// with their cause, which never reaches the response.
func Fail(c *gin.Context, err error) {
	e := apperr.FromRequest(c.Request.Context(), err)
	if e.Code == apperr.CodeInternal || e.Code == apperr.CodeUnavailable {
		Logger(c).ErrorContext(c.Request.Context(), "request failed", "code", e.Code, "err", err)
	}
	switch e.Code {
	case apperr.CodeRateLimited:
		setRefusalHeaders(c, e)
	case apperr.CodeUnavailable:
		c.Header(HeaderRetryAfter, unavailableRetryAfter)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	_ = c.Error(err) // for the access log
	if c.GetBool(graphqlErrorsKey) {
		renderGraphQLError(c, e)
		return
	}
	WriteJSON(c, e.Status(), Failure{
		Error: ErrorBody{Code: e.Code, Message: e.Message, Details: details},
		Meta:  NewMeta(c),
	})
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
	WriteJSON(c, e.Status(), graphqlFailure{Errors: []graphqlError{{Message: e.Message, Extensions: ext}}})
}
