package service

import (
	"errors"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/apperr"
)

// TestFilterBounds: a filter string or list the databases could not take
// is a VALIDATION_ERROR naming the field, with the reason clients read.
func TestFilterBounds(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		reason string // "" when it passes
	}{
		{"5000 characters of two bytes", CheckFilterText("nameContains", strings.Repeat("é", MaxFilterText)), ""},
		{"5001 characters", CheckFilterText("nameContains", strings.Repeat("é", MaxFilterText+1)), "must be at most 5000 characters"},
		{"50,001 bytes", CheckFilterText("nameContains", strings.Repeat("a", 50_001)), "must be at most 5000 characters"},
		{"a NUL", CheckFilterText("nameContains", "a\x00"), "must not contain NUL characters"},
		{"not UTF-8", CheckFilterText("nameContains", "a\xff"), "must be valid UTF-8"},
		{"100 values", CheckFilterValues("idIn", MaxFilterValues), ""},
		{"101 values", CheckFilterValues("idIn", MaxFilterValues+1), "must hold at most 100 values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.reason == "" {
				if c.err != nil {
					t.Fatalf("refused: %v", c.err)
				}
				return
			}
			var e *apperr.Error
			if !errors.As(c.err, &e) || e.Code != apperr.CodeValidation || e.Details["reason"] != c.reason || e.Details["field"] == nil {
				t.Fatalf("%v, want VALIDATION_ERROR with reason %q", c.err, c.reason)
			}
		})
	}
}
