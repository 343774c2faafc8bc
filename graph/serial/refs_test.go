package serial

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// plainWriter hides bytes.Buffer's methods: the path of any other writer.
type plainWriter struct{ b *strings.Builder }

func (w plainWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// TestString: byte for byte what graphql.MarshalString writes, into a
// bytes.Buffer or any other writer.
func TestString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and backslash \`, "tab\tcr\rlf\n", "bell\x07 nul\x00 us\x1f del\x7f",
		"é, 東京, 🙂", "invalid \xff\xfe utf-8", "</script>&", strings.Repeat("long ", 1000),
	} {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		writesAs(t, String(&s), want.String(), fmt.Sprintf("%q", s))
	}
}

// writesAs checks that m writes want both after what a bytes.Buffer
// already holds and into a writer that is not a bytes.Buffer; what names
// the value in failures.
func writesAs(t *testing.T, m graphql.Marshaler, want, what string) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("x")
	m.MarshalGQL(&buf)
	if got := strings.TrimPrefix(buf.String(), "x"); got != want {
		t.Errorf("%s into a bytes.Buffer: %s, want %s", what, got, want)
	}
	var sb strings.Builder
	m.MarshalGQL(plainWriter{&sb})
	if sb.String() != want {
		t.Errorf("%s into another writer: %s, want %s", what, sb.String(), want)
	}
}

// TestTime: a time is written in UTC as the Time scalar writes it; a zero
// time goes to the generated marshaller, which reports the null.
func TestTime(t *testing.T) {
	paris := time.FixedZone("Paris", 3600)
	field := graphql.CollectedField{Field: &ast.Field{Alias: "createdAt", Name: "createdAt"}}
	fallback := func(context.Context, ast.SelectionSet, time.Time) graphql.Marshaler { return graphql.Null }
	for _, tc := range []struct {
		name string
		in   time.Time
		want string
	}{
		{"utc", time.Date(2026, 11, 23, 12, 4, 22, 123456789, time.UTC), `"2026-11-23T12:04:22.123456789Z"`},
		{"another zone", time.Date(2026, 1, 2, 3, 4, 5, 500000000, paris), `"2026-01-02T02:04:05.5Z"`},
		{"zero takes the marshaller", time.Time{}, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			Time(context.Background(), field, &tc.in, fallback).MarshalGQL(&buf)
			if buf.String() != tc.want {
				t.Errorf("wrote %s, want %s", buf.String(), tc.want)
			}
		})
	}
}

// enumValue is an enum of string kind that marshals as ent's do.
type enumValue string

func (e enumValue) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(e))) }

// TestEnum: byte for byte what the enum's own MarshalGQL writes, into a
// bytes.Buffer or any other writer, without an allocation for a name.
func TestEnum(t *testing.T) {
	for _, v := range []enumValue{"ACTIVE", "in_review", "_x9", "", "9LIVES", "a b", `q"uote`, "é"} {
		var want bytes.Buffer
		v.MarshalGQL(&want)
		writesAs(t, Enum(&v), want.String(), fmt.Sprintf("%q", v))
	}
	v := enumValue("ARCHIVED")
	var buf bytes.Buffer
	buf.Grow(64)
	if n := testing.AllocsPerRun(10, func() { buf.Reset(); Enum(&v).MarshalGQL(&buf) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
