package service

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/internal/apperr"
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

// ParseKeyset reads a cursor Encode made for a row whose id has prefix;
// anything else is VALIDATION_ERROR naming field.
func ParseKeyset(field, prefix, s string) (*Keyset, error) {
	bad := apperr.Validation(field, "is not a cursor of this list: pass meta.pagination.next_cursor as it was returned")
	if s == "" || len(s) > maxCursorLen {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var w keysetWire
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(raw))
	dec.DisallowUnknownFields(true) // after Reset, which clears it
	if err := dec.Decode(&w); err != nil || w.CreatedAt.IsZero() || !pulid.Valid(prefix, w.ID) {
		return nil, bad
	}
	return &Keyset{CreatedAt: w.CreatedAt.UTC(), ID: w.ID}, nil
}
