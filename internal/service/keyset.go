package service

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/acme/itemsvc/ent/schema/pulid"
)

// PageParams select one page of a list kept newest first (created_at, then
// id, both descending): Limit rows from the page numbered Page (REST's page
// and limit), or, when After is set, from the row after it (GraphQL's
// first and after). A page by number shifts when rows are added before it;
// one after a row does not.
type PageParams struct {
	Page, Limit int
	After       *Keyset
}

// Keyset is a row's place in a list kept newest first: its created_at and
// id. The page after it starts with the next older row, whatever was added
// or removed meanwhile, the row itself included.
type Keyset struct {
	CreatedAt time.Time
	ID        string
}

// older selects the rows after k in a list kept newest first, for any
// table with created_at and id columns (the time and pulid mixins). It is
// spelled created_at <= v AND (created_at < v OR (created_at = v AND id <
// id0)), as the item cursors are (listcursor.go): with the bare OR, SQLite
// reads both halves through the index and sorts what they found, every row
// older than the cursor; the bound in front makes it one range of the
// index, read in order.
func (k Keyset) older() func(*sql.Selector) {
	return func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			b.Ident(s.C("created_at")).WriteString(" <= ").Arg(k.CreatedAt)
			b.WriteString(" AND (")
			b.Ident(s.C("created_at")).WriteString(" < ").Arg(k.CreatedAt)
			b.WriteString(" OR (")
			b.Ident(s.C("created_at")).WriteString(" = ").Arg(k.CreatedAt)
			b.WriteString(" AND ")
			b.Ident(s.C("id")).WriteString(" < ").Arg(k.ID)
			b.WriteString("))")
		}))
	}
}

// offset is the number of rows before the page p names by number.
func (p PageParams) offset() int {
	return max(p.Page-1, 0) * p.Limit
}

// cut keeps the first limit rows of a page read one row longer, and
// reports whether there was that one more.
func cut[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}

// keysetWire is a Keyset as a REST cursor carries it: the shape of
// entgql's cursors ({i: id, v: value}), so that both APIs' cursors of one
// list name a row alike.
type keysetWire struct {
	ID        string    `msgpack:"i"`
	CreatedAt time.Time `msgpack:"v"`
}

// Encode returns the opaque text of a REST cursor naming k: msgpack in
// URL-safe base64 without padding.
func (k Keyset) Encode() string {
	b, err := msgpack.Marshal(keysetWire{ID: k.ID, CreatedAt: k.CreatedAt.UTC()})
	if err != nil {
		// A string and a time cannot fail to encode.
		panic(fmt.Sprintf("encode cursor: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeKeyset reads a cursor Encode made for a row whose id has prefix;
// anything else is ErrNotACursor.
func DecodeKeyset(prefix, s string) (*Keyset, error) {
	if s == "" || len(s) > maxCursorLen {
		return nil, ErrNotACursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrNotACursor
	}
	var w keysetWire
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(raw))
	dec.DisallowUnknownFields(true) // after Reset, which clears it
	if err := dec.Decode(&w); err != nil || w.CreatedAt.IsZero() || !pulid.Valid(prefix, w.ID) {
		return nil, ErrNotACursor
	}
	return &Keyset{CreatedAt: w.CreatedAt.UTC(), ID: w.ID}, nil
}
