// Package scalar holds the GraphQL scalars whose wire format the contract
// fixes. It is apart from package graph because the generated executor
// imports it and package graph imports the executor.
package scalar

import (
	"bytes"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalTime writes a timestamp as REST does: RFC 3339 with nanoseconds, in
// UTC with Z, so that the two transports return identical values whatever
// zone the database driver hands back. The zero time is null, as in
// graphql.MarshalTime.
func MarshalTime(t time.Time) graphql.Marshaler {
	if t.IsZero() {
		return graphql.Null
	}
	return timestamp(t.UTC())
}

// timestamp is a time marshalled as a JSON string. Unlike graphql.MarshalTime
// (a closure, a formatted string and a quoted copy of it), it formats into
// the response buffer itself: a page of items has two per item.
type timestamp time.Time

// MarshalGQL implements graphql.Marshaler.
func (t timestamp) MarshalGQL(w io.Writer) {
	if buf, ok := w.(*bytes.Buffer); ok {
		buf.Write(appendTimestamp(buf.AvailableBuffer(), time.Time(t)))
		return
	}
	_, _ = w.Write(appendTimestamp(nil, time.Time(t)))
}

// TimeRef marshals *t as MarshalTime does; the time must not be zero. A
// pointer held in the interface costs no allocation (graph/serial.Time).
func TimeRef(t *time.Time) graphql.Marshaler { return (*timeRef)(t) }

// timeRef is a loaded object's time, marshalled in place.
type timeRef time.Time

// MarshalGQL implements graphql.Marshaler.
func (t *timeRef) MarshalGQL(w io.Writer) { timestamp(time.Time(*t).UTC()).MarshalGQL(w) }

// appendTimestamp appends t as a quoted RFC 3339 string with nanoseconds.
// Its characters need no JSON escaping.
func appendTimestamp(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// UnmarshalTime reads an RFC 3339 timestamp (filters such as createdAtGT).
func UnmarshalTime(v any) (time.Time, error) {
	return graphql.UnmarshalTime(v)
}
