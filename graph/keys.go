package graph

import (
	"errors"
	"strings"

	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// keyFieldNames are GraphQL's names of the key fields the service names in
// REST's words in its VALIDATION_ERRORs.
var keyFieldNames = map[string]string{
	"expires_at":            "expiresAt",
	"user_id":               "userID",
	"rate_limit_per_minute": "rateLimitPerMinute",
	"rate_limit_per_hour":   "rateLimitPerHour",
}

// keyError renames the field of a key VALIDATION_ERROR to the input's
// name of it, keeping its other details (the cap's limit); any other
// error passes as it is.
func keyError(err error) error {
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeValidation {
		return err
	}
	field, _ := e.Details["field"].(string)
	reason, _ := e.Details["reason"].(string)
	name, ok := keyFieldNames[field]
	if !ok {
		return err
	}
	out := apperr.Validation(name, reason)
	for k, v := range e.Details {
		if _, set := out.Details[k]; !set {
			out.Details[k] = v
		}
	}
	return out
}

// keyScopes are a key's scopes in GraphQL's spelling (read is READ).
func keyScopes(scopes []string) []model.APIKeyScope {
	out := make([]model.APIKeyScope, len(scopes))
	for i, s := range scopes {
		out[i] = model.APIKeyScope(strings.ToUpper(s))
	}
	return out
}

// keyInput is createAPIKey's input as the service takes it, scopes in
// REST's spelling; null scopes stay absent.
func keyInput(in model.CreateAPIKeyInput) service.KeyInput {
	out := service.KeyInput{Label: in.Label, ExpiresAt: in.ExpiresAt, UserID: in.UserID}
	if in.Scopes != nil {
		scopes := make([]string, len(in.Scopes))
		for i, s := range in.Scopes {
			scopes[i] = strings.ToLower(string(s))
		}
		out.Scopes = &scopes
	}
	return out
}

// keyChanges is updateAPIKey's input as the service takes it: an absent
// limit stays, a null one returns to the server's default.
func keyChanges(in model.UpdateAPIKeyInput) service.KeyChanges {
	out := service.KeyChanges{Label: in.Label}
	if v, ok := in.RateLimitPerMinute.ValueOK(); ok {
		out.RateLimitPerMinute = service.LimitChange{Set: true, Value: v}
	}
	if v, ok := in.RateLimitPerHour.ValueOK(); ok {
		out.RateLimitPerHour = service.LimitChange{Set: true, Value: v}
	}
	return out
}

// newKey is a key as GraphQL answers it (a pointer, as gqlgen wants).
func newKey(k resource.APIKey) *resource.APIKey { return &k }
