package service

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acme/itemsvc/internal/apperr"
)

// Bounds of a list filter (docs/limits.md, "Filters"). A filter is checked
// before any statement runs, so that what the databases refuse (SQLite's
// LIKE patterns over 50,000 bytes, PostgreSQL's and SQLite's limits on
// the parameters of one statement, NUL characters in PostgreSQL text) is a
// VALIDATION_ERROR naming the field rather than an INTERNAL_ERROR.
const (
	// MaxFilterText is the longest string a filter compares with, in
	// characters: the longest item field (a description) holds as many, so
	// no longer value can match anything.
	MaxFilterText = MaxDescriptionLen
	// MaxFilterValues is the most values one In or NotIn list holds (and
	// the most conditions one and or or list holds).
	MaxFilterValues = 100
	// MaxFilterTerms is the most conditions and values a whole filter
	// holds: every field given and every element of a list counts one.
	MaxFilterTerms = 1000
	// MaxFilterDepth is how deep and, or, not and the edge filters
	// (hasOwnerWith, hasItemsWith) nest; the filter itself is level 1.
	MaxFilterDepth = 10
)

// CheckFilterText refuses a filter string no stored value can be compared
// with: longer than MaxFilterText characters, not UTF-8 or holding a NUL
// character (which PostgreSQL refuses in text).
func CheckFilterText(field, s string) error {
	switch {
	case len(s) > MaxFilterText*utf8.UTFMax || utf8.RuneCountInString(s) > MaxFilterText:
		return apperr.Validation(field, fmt.Sprintf("must be at most %d characters", MaxFilterText))
	case !utf8.ValidString(s):
		return apperr.Validation(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return apperr.Validation(field, "must not contain NUL characters")
	}
	return nil
}

// CheckFilterValues refuses a list filter of more than MaxFilterValues
// values.
func CheckFilterValues(field string, n int) error {
	if n > MaxFilterValues {
		return apperr.Validation(field, fmt.Sprintf("must hold at most %d values", MaxFilterValues))
	}
	return nil
}
