package enum_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/graph/enum"
	"github.com/acme/itemsvc/graph/generated"
)

// written is what m writes.
func written(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

// TestSchemaValues: every value the schema lists for an ent enum reads as
// an ent value that ent's validator accepts and writes back as itself, and
// ent's values are all listed (the constants ent generates), upper case.
func TestSchemaValues(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	for _, c := range []struct {
		enum      string
		ent       []string
		unmarshal func(any) (string, error)
		marshal   func(string) graphql.Marshaler
		valid     func(string) error
	}{
		{"ItemStatus", []string{string(item.StatusActive), string(item.StatusArchived)},
			func(v any) (string, error) { s, err := enum.UnmarshalItemStatus(v); return string(s), err },
			func(s string) graphql.Marshaler { return enum.MarshalItemStatus(item.Status(s)) },
			func(s string) error { return item.StatusValidator(item.Status(s)) }},
		{"UserRole", []string{string(user.RoleUser), string(user.RoleAdmin)},
			func(v any) (string, error) { s, err := enum.UnmarshalUserRole(v); return string(s), err },
			func(s string) graphql.Marshaler { return enum.MarshalUserRole(user.Role(s)) },
			func(s string) error { return user.RoleValidator(user.Role(s)) }},
		{"DeliveryState", []string{string(delivery.StatePending), string(delivery.StateSucceeded), string(delivery.StateFailed)},
			func(v any) (string, error) { s, err := enum.UnmarshalDeliveryState(v); return string(s), err },
			func(s string) graphql.Marshaler { return enum.MarshalDeliveryState(delivery.State(s)) },
			func(s string) error { return delivery.StateValidator(delivery.State(s)) }},
	} {
		def := schema.Types[c.enum]
		if def == nil {
			t.Fatalf("the schema has no %s", c.enum)
		}
		var names []string
		for _, v := range def.EnumValues {
			names = append(names, v.Name)
			val, err := c.unmarshal(v.Name)
			if err != nil || c.valid(val) != nil {
				t.Errorf("%s.%s reads as %q (%v), which ent refuses", c.enum, v.Name, val, err)
				continue
			}
			if got := written(c.marshal(val)); got != strconv.Quote(v.Name) {
				t.Errorf("%s: %q writes %s, want %q", c.enum, val, got, v.Name)
			}
		}
		var want []string
		for _, v := range c.ent {
			want = append(want, enum.Name(v))
		}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("%s lists %v, want ent's values upper case %v", c.enum, names, want)
		}
	}
}

// TestUnmarshalRefuses: only a name exactly as the schema spells it reads;
// GraphQL's validator lets a variable through in any case ("active").
func TestUnmarshalRefuses(t *testing.T) {
	for _, v := range []any{"active", "Active", "gone", "", 1, nil} {
		if s, err := enum.UnmarshalItemStatus(v); err == nil {
			t.Errorf("%#v read as %q", v, s)
		}
	}
	if _, err := enum.UnmarshalUserRole("admin"); err == nil {
		t.Error("admin read as a UserRole")
	}
}

// TestMarshalAllocs: a value met before is written without an allocation
// (a page of items has a status each); one ent does not know is written
// upper case too, as it is stored.
func TestMarshalAllocs(t *testing.T) {
	var b bytes.Buffer
	enum.MarshalItemStatus(item.StatusArchived).MarshalGQL(&b)
	if n := testing.AllocsPerRun(100, func() { enum.MarshalItemStatus(item.StatusArchived) }); n != 0 {
		t.Errorf("%v allocations per status", n)
	}
	if got := written(enum.MarshalItemStatus("lost")); got != `"LOST"` {
		t.Errorf("an unknown status writes %s", got)
	}
}
