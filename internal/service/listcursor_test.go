package service

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
)

// TestCursorRoundTrip: the cursor of an item, in every order, reads back as
// the same position, and only in that order.
func TestCursorRoundTrip(t *testing.T) {
	it := &ent.Item{
		ID:        "item_01m80r92d8jcq7kyybma0724rk",
		Name:      "a name with ünïcode, spaces & symbols?=",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC),
		UpdatedAt: time.Date(2026, 2, 3, 4, 5, 6, 999999000, time.UTC),
	}
	want := map[string]any{"created_at": it.CreatedAt, "updated_at": it.UpdatedAt, "name": it.Name}
	for _, sort := range []string{"created_at", "updated_at", "name"} {
		for _, order := range []string{"asc", "desc"} {
			t.Run(sort+" "+order, func(t *testing.T) {
				p, err := ParseListParams(url.Values{"sort": {sort}, "order": {order}})
				if err != nil {
					t.Fatal(err)
				}
				enc := p.cursorAfter(it).Encode()
				got, err := ParseListParams(url.Values{"sort": {sort}, "order": {order}, "cursor": {enc}})
				if err != nil {
					t.Fatalf("parse %q: %v", enc, err)
				}
				c := got.After
				if c.ID != it.ID || c.Sort != sort || c.Desc != (order == "desc") {
					t.Errorf("cursor = %+v", c)
				}
				if tm, ok := want[sort].(time.Time); ok {
					if v, _ := c.Value.(time.Time); !v.Equal(tm) || v.Location() != time.UTC {
						t.Errorf("value = %v, want %v in UTC", c.Value, tm)
					}
				} else if c.Value != want[sort] {
					t.Errorf("value = %v, want %v", c.Value, want[sort])
				}
				other := "asc"
				if order == "asc" {
					other = "desc"
				}
				if _, err := ParseListParams(url.Values{"sort": {sort}, "order": {other}, "cursor": {enc}}); !isCursorError(err) {
					t.Errorf("with order=%s: %v, want a VALIDATION_ERROR on cursor", other, err)
				}
			})
		}
	}
}

func isCursorError(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Code == apperr.CodeValidation && e.Details["field"] == "cursor"
}

// FuzzCursor: any text as a cursor is a position or a VALIDATION_ERROR on
// cursor; never a panic, never another error.
func FuzzCursor(f *testing.F) {
	p, _ := ParseListParams(url.Values{})
	f.Add(p.cursorAfter(&ent.Item{ID: "item_01m80r92d8jcq7kyybma0724rk", CreatedAt: time.Now()}).Encode())
	for _, s := range []string{"", "AAAA", "hKFpv2l0ZW1f", "3f____8", "kZA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseListParams(url.Values{"cursor": {s}})
		if err != nil && !isCursorError(err) {
			t.Fatalf("cursor %q: %v", s, err)
		}
	})
}
