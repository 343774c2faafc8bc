package graph_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/graph/generated"
)

// TestFieldName: the service's names of fields become GraphQL's by one
// rule; GraphQL's own names pass as they are.
func TestFieldName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"expires_at", "expiresAt"},
		{"rate_limit_per_minute", "rateLimitPerMinute"},
		{"user_id", "userID"},
		{"actor_id", "actorID"},
		{"If-Match", "ifMatch"},
		{"name", "name"},
		{"first", "first"},
		{"ifMatch", "ifMatch"},
		{"@defer", "@defer"},
		{"", ""},
	} {
		if got := graph.FieldName(c.in); got != c.want {
			t.Errorf("FieldName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFieldNameReachesEveryArgument: every argument and input field of the
// schema is what FieldName makes of its name in snake_case (userID of
// user_id), so that the rule names whichever of them a service error is
// about. The filters of where are left out: graph/server checks them in
// GraphQL's own names (nameHasPrefix).
func TestFieldNameReachesEveryArgument(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	check := func(where, name string) {
		if got := graph.FieldName(snakeCase(name)); got != name {
			t.Errorf("%s: the service's %s is GraphQL's %s, not %s", where, snakeCase(name), got, name)
		}
	}
	for _, def := range schema.Types {
		if strings.HasPrefix(def.Name, "__") {
			continue
		}
		switch def.Kind {
		case ast.Object:
			for _, f := range def.Fields {
				for _, a := range f.Arguments {
					check(def.Name+"."+f.Name, a.Name)
				}
			}
		case ast.InputObject:
			if strings.HasSuffix(def.Name, "WhereInput") {
				continue
			}
			for _, f := range def.Fields {
				check(def.Name, f.Name)
			}
		}
	}
}

// snakeCase is a camelCase name in snake_case, an upper-case run one word
// (userID is user_id).
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
