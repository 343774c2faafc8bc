package service

import (
	"testing"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
)

// TestETag: a tag is strong and quoted, and differs across versions and
// across items.
func TestETag(t *testing.T) {
	a1 := ETag(&ent.Item{ID: "item_a", Version: 1})
	seen := map[string]bool{a1: true}
	for _, it := range []*ent.Item{{ID: "item_a", Version: 2}, {ID: "item_b", Version: 1}, {ID: "item_b", Version: 2}} {
		tag := ETag(it)
		if seen[tag] {
			t.Errorf("%s v%d shares its tag %s", it.ID, it.Version, tag)
		}
		seen[tag] = true
	}
	if a1 != ETag(&ent.Item{ID: "item_a", Version: 1, Name: "renamed"}) {
		t.Error("the tag depends on more than id and version")
	}
	if len(a1) < 3 || a1[0] != '"' || a1[len(a1)-1] != '"' {
		t.Errorf("tag %s is not a quoted strong tag", a1)
	}
}

// TestConditionHeaders: If-Match compares strongly, If-None-Match weakly,
// both take "*" and lists, and a malformed value is VALIDATION_ERROR naming
// the header (RFC 9110 §13.1.1, §13.1.2).
func TestConditionHeaders(t *testing.T) {
	it := &ent.Item{ID: "item_a", Version: 3}
	cur, old := ETag(it), ETag(&ent.Item{ID: "item_a", Version: 2})
	rows := []struct {
		value        string
		ifMatch, inm bool // the item passes If-Match; If-None-Match names it
		malformed    bool
	}{
		{value: cur, ifMatch: true, inm: true},
		{value: old},
		{value: "W/" + cur, inm: true},
		{value: "*", ifMatch: true, inm: true},
		{value: " * ", ifMatch: true, inm: true},
		{value: old + ", " + cur, ifMatch: true, inm: true},
		{value: old + "," + cur + ",", ifMatch: true, inm: true},
		{value: `"x",W/"y"`},
		{value: `""`},
		{value: "unquoted", malformed: true},
		{value: `"open`, malformed: true},
		{value: `"a" "b"`, malformed: true},
		{value: `*, "a"`, malformed: true},
		{value: `"a b"`, malformed: true},
		{value: ",", malformed: true},
		{value: `W/`, malformed: true},
	}
	for _, tc := range rows {
		t.Run(tc.value, func(t *testing.T) {
			pre, err := ParseIfMatch(tc.value)
			inm, err2 := NoneMatch(tc.value, cur)
			if tc.malformed {
				for field, err := range map[string]error{"If-Match": err, "If-None-Match": err2} {
					if e := apperr.From(err); e.Code != apperr.CodeValidation || e.Details["field"] != field {
						t.Errorf("%s: %v, want VALIDATION_ERROR on it", field, err)
					}
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatalf("%v, %v", err, err2)
			}
			if got := pre.check(it) == nil; got != tc.ifMatch {
				t.Errorf("If-Match passes: %v, want %v", got, tc.ifMatch)
			}
			if inm != tc.inm {
				t.Errorf("If-None-Match names it: %v, want %v", inm, tc.inm)
			}
		})
	}
	if pre, err := ParseIfMatch(""); err != nil || pre.set() {
		t.Errorf("an empty If-Match is a condition: %v %v", pre, err)
	}
}
