package service

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/schema/pulid"
)

// maxCursorLen bounds what is decoded at all: a cursor this API issues is
// well under 200 characters (an id, a name of at most 200 characters, the
// sort), so anything much longer was not issued here.
const maxCursorLen = 1024

// ItemCursor is a position in a sorted list of items: the sort value and id of
// the last item of a page. The next page starts after it (keyset paging), so a
// deep page costs what the first one does, unlike OFFSET.
//
// On the wire it has the shape of entgql's cursors (msgpack of {i: id, v:
// value}) in URL-safe base64 without padding, plus the sort and direction it
// was made for, so that a cursor used with another order is refused rather
// than silently skipping or repeating items.
type ItemCursor struct {
	ID   string `msgpack:"i"`
	Sort string `msgpack:"s"`
	Desc bool   `msgpack:"d"`
	// Value is the item's value of the sort column: a time.Time (UTC) for
	// created_at and updated_at, a string for name.
	Value any `msgpack:"-"`
}

// wireCursor is ItemCursor as encoded; the value stays raw until the sort
// says which type it must have.
type wireCursor struct {
	ID    string             `msgpack:"i"`
	Value msgpack.RawMessage `msgpack:"v"`
	Sort  string             `msgpack:"s"`
	Desc  bool               `msgpack:"d"`
}

// cursorAfter is the cursor of it in the order of p.
func (p ListParams) cursorAfter(it *ent.Item) ItemCursor {
	c := ItemCursor{ID: it.ID, Sort: p.Sort, Desc: p.Desc}
	switch p.Sort {
	case "updated_at":
		c.Value = it.UpdatedAt.UTC()
	case "name":
		c.Value = it.Name
	default:
		c.Value = it.CreatedAt.UTC()
	}
	return c
}

// Encode returns the opaque text of the cursor.
func (c ItemCursor) Encode() string {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	v, err := msgpack.Marshal(c.Value)
	if err == nil {
		err = enc.Encode(wireCursor{ID: c.ID, Value: v, Sort: c.Sort, Desc: c.Desc})
	}
	if err != nil {
		// Only strings and times are ever encoded, which cannot fail.
		panic(fmt.Sprintf("encode cursor: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// ErrNotACursor is the one answer to any cursor this API did not issue:
// which byte was wrong is of no use to a client. The transport that read
// the cursor names it in its words.
var ErrNotACursor = errors.New("not a cursor of this list")

// DecodeItemCursor decodes a cursor Encode made. The transport checks that
// its Sort and Desc are those of the list it continues.
func DecodeItemCursor(s string) (*ItemCursor, error) {
	if s == "" || len(s) > maxCursorLen {
		return nil, ErrNotACursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrNotACursor
	}
	var w wireCursor
	dec := msgpack.GetDecoder() // pooled: NewDecoder makes a reader and buffers
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(raw))
	dec.DisallowUnknownFields(true) // after Reset, which clears it
	if err := dec.Decode(&w); err != nil {
		return nil, ErrNotACursor
	}
	if !pulid.Valid("item_", w.ID) {
		return nil, ErrNotACursor
	}
	if _, known := sortFields[w.Sort]; !known {
		return nil, ErrNotACursor
	}
	c := &ItemCursor{ID: w.ID, Sort: w.Sort, Desc: w.Desc}
	if c.Sort == "name" {
		var v string
		if err := msgpack.Unmarshal(w.Value, &v); err != nil {
			return nil, ErrNotACursor
		}
		c.Value = v
	} else {
		var v time.Time
		if err := msgpack.Unmarshal(w.Value, &v); err != nil || v.IsZero() {
			return nil, ErrNotACursor
		}
		c.Value = v.UTC()
	}
	return c, nil
}

// after selects the items that follow the cursor in its order. It is spelled
// col < v OR (col = v AND id < id0), behind col <= v, rather than as a row
// comparison: both SQLite and PostgreSQL then range-scan the
// (user_id, col, id) and (col, id) indexes from the cursor on.
//
// It is written as one predicate: ent's And and Or of field predicates build
// the same SQL through a closure and a nested builder apiece, which made a
// deep page dearer than the first (profile of the cursor-100k row).
func (c ItemCursor) after() predicate.Item {
	col := sortFields[c.Sort]
	beyond, beyondOrAt := " > ", " >= "
	if c.Desc {
		beyond, beyondOrAt = " < ", " <= "
	}
	return func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			// col >= v AND (col > v OR (col = v AND id > id0)), or with <.
			b.Ident(s.C(col)).WriteString(beyondOrAt).Arg(c.Value)
			b.WriteString(" AND (")
			b.Ident(s.C(col)).WriteString(beyond).Arg(c.Value)
			b.WriteString(" OR (")
			b.Ident(s.C(col)).WriteString(" = ").Arg(c.Value)
			b.WriteString(" AND ")
			b.Ident(s.C(item.FieldID)).WriteString(beyond).Arg(c.ID)
			b.WriteString("))")
		}))
	}
}
