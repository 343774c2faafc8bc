package serial

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph/scalar"
)

// String marshals the non-null String or ID field *p as gqlgen's
// graphql.MarshalString does, byte for byte. gqlgen's is a closure holding
// a copy of the string: one allocation per field, five per item of a page.
// A pointer into the loaded object is stored in the interface as it is;
// the object is not changed while its response is written. The generator
// (graph/gqlgen.go) points plain string fields of objects here.
func String(p *string) graphql.Marshaler { return (*quoted)(p) }

// quoted is a string marshalled as a JSON string.
type quoted string

// hex is gqlgen's digit set for \u00XX escapes.
const hex = "0123456789ABCDEF"

// MarshalGQL implements graphql.Marshaler.
func (s *quoted) MarshalGQL(w io.Writer) {
	if buf, ok := w.(*bytes.Buffer); ok {
		buf.Write(appendQuoted(buf.AvailableBuffer(), string(*s)))
		return
	}
	_, _ = w.Write(appendQuoted(nil, string(*s)))
}

// appendQuoted appends s quoted as graphql.MarshalString writes it: only
// control characters, the backslash and the quote are escaped (all ASCII,
// so going byte by byte leaves every multi-byte sequence as it is).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		case '\n':
			b = append(b, '\\', 'n')
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Time marshals the non-null Time field *p in the contract's format
// (scalar.TimeRef) without an allocation. A zero time takes the generated
// marshaller, which reports the non-null field as null, as before.
func Time(ctx context.Context, field graphql.CollectedField, p *time.Time,
	marshal func(ctx context.Context, sel ast.SelectionSet, v time.Time) graphql.Marshaler,
) graphql.Marshaler {
	if p.IsZero() {
		return marshal(ctx, field.Selections, *p)
	}
	return scalar.TimeRef(p)
}

// Enum marshals the non-null enum field *p as its own MarshalGQL does, for
// an enum of string kind (ent's enums and gqlgen's models), without the
// allocation of the strconv.Quote they call: a value that is a GraphQL
// name, as every valid one is, needs no escaping and is written as it is;
// any other is left to the enum's MarshalGQL. The generator
// (graph/gqlgen.go) points enum fields of objects here.
func Enum[T interface {
	~string
	graphql.Marshaler
}](p *T) graphql.Marshaler {
	return enum[T]{p}
}

// enum is a pointer to an enum value; a struct of one pointer is held by
// an interface without an allocation.
type enum[T interface {
	~string
	graphql.Marshaler
}] struct{ p *T }

// MarshalGQL implements graphql.Marshaler.
func (e enum[T]) MarshalGQL(w io.Writer) {
	s := string(*e.p)
	if !isName(s) {
		(*e.p).MarshalGQL(w)
		return
	}
	if buf, ok := w.(*bytes.Buffer); ok {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	_, _ = io.WriteString(w, `"`+s+`"`)
}

// isName reports whether s is a GraphQL name ([_A-Za-z][_0-9A-Za-z]*),
// which strconv.Quote writes between quotes unchanged.
func isName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !('0' <= c && c <= '9') && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
