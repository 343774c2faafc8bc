package graph

import (
	"strings"

	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

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
