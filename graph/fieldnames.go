package graph

import "strings"

// FieldName is GraphQL's name of an input the service names (in its
// VALIDATION_ERRORs and others, apperr.Error.Field): the service names a
// field as the ent schema does, in snake_case (expires_at,
// rate_limit_per_minute), or what HTTP defines as HTTP does (If-Match);
// GraphQL spells its arguments and input fields in lowerCamelCase, with
// id as ID, as entgql does (expiresAt, rateLimitPerMinute, userID,
// ifMatch). A name in neither form (first, ifMatch, @defer) is GraphQL's
// already and stays as it is. This one rule, rather than a list of names,
// is how every GraphQL error names the service's fields: an input field
// is named by its own name, without the argument that holds it (input),
// as GraphQL's own validation names it.
func FieldName(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' })
	if len(words) < 2 {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i, w := range words {
		switch {
		case i == 0:
			b.WriteString(strings.ToLower(w))
		case strings.EqualFold(w, "id"):
			b.WriteString("ID")
		default:
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		}
	}
	return b.String()
}
