package scalar

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// onlyWriter hides bytes.Buffer's methods: the path of any other writer.
type onlyWriter struct{ b *strings.Builder }

func (w onlyWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// TestMarshalTime: the same text as graphql.MarshalTime of the UTC time,
// whatever the writer; the zero time is null.
func TestMarshalTime(t *testing.T) {
	paris := time.FixedZone("Paris", 3600)
	for _, tc := range []struct {
		name string
		in   time.Time
		want string
	}{
		{"utc with nanoseconds", time.Date(2026, 11, 23, 12, 4, 22, 123456789, time.UTC), `"2026-11-23T12:04:22.123456789Z"`},
		{"whole seconds", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), `"2026-01-02T03:04:05Z"`},
		{"another zone is written in UTC", time.Date(2026, 1, 2, 3, 4, 5, 500000000, paris), `"2026-01-02T02:04:05.5Z"`},
		{"zero is null", time.Time{}, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			buf.WriteString("x")
			MarshalTime(tc.in).MarshalGQL(&buf)
			if got := strings.TrimPrefix(buf.String(), "x"); got != tc.want {
				t.Errorf("into a bytes.Buffer: %s, want %s", got, tc.want)
			}
			var sb strings.Builder
			MarshalTime(tc.in).MarshalGQL(onlyWriter{&sb})
			if sb.String() != tc.want {
				t.Errorf("into another writer: %s, want %s", sb.String(), tc.want)
			}
			var gqlgen bytes.Buffer
			graphql.MarshalTime(tc.in.UTC()).MarshalGQL(&gqlgen)
			if gqlgen.String() != tc.want {
				t.Errorf("graphql.MarshalTime writes %s, want %s", gqlgen.String(), tc.want)
			}
		})
	}
}
