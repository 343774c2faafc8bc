package httpapi

import (
	"encoding/json"
	"mime"
	"strconv"
	"strings"

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
	case apperr.CodeIdempotencyKeyInUse:
		if n, ok := e.Details["retry_after"].(int); ok {
			c.Header(HeaderRetryAfter, strconv.Itoa(n))
		}
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

// graphqlRequestError is a refusal under application/graphql-response+json:
// no data entry, which the GraphQL-over-HTTP specification keeps for an
// operation that ran.
type graphqlRequestError struct {
	Errors []graphqlError `json:"errors"`
}

type graphqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
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
	WriteJSON(c, e.Status(), graphqlFailure{Errors: errs})
}
