package service

import (
	"errors"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
)

// TestCursorRoundTrip: the cursor of an item, in every order, reads back as
// the same position in that order (REST refuses it in another:
// rest/cursor_test.go).
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
				p := ListParams{Sort: sort, Desc: order == "desc"}
				enc := p.cursorAfter(it).Encode()
				c, err := DecodeItemCursor(enc)
				if err != nil {
					t.Fatalf("decode %q: %v", enc, err)
				}
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
			})
		}
	}
}

// FuzzCursor: any text as a cursor is a position or ErrNotACursor; never a
// panic, never another error.
func FuzzCursor(f *testing.F) {
	p := ListParams{Sort: "created_at", Desc: true}
	f.Add(p.cursorAfter(&ent.Item{ID: "item_01m80r92d8jcq7kyybma0724rk", CreatedAt: time.Now()}).Encode())
	for _, s := range []string{"", "AAAA", "hKFpv2l0ZW1f", "3f____8", "kZA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := DecodeItemCursor(s)
		if err != nil && !errors.Is(err, ErrNotACursor) {
			t.Fatalf("cursor %q: %v", s, err)
		}
	})
}
