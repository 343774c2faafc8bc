package service

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema"
	"github.com/acme/itemsvc/internal/apperr"
)

// Bounds of item fields, in characters, as the schema declares them.
const (
	MaxNameLen        = schema.ItemNameMax
	MaxDescriptionLen = schema.ItemDescriptionMax
)

// normalizeItem trims an item's name and checks the fields of an item input
// that have rules of their own (nil: absent). Every other string an input
// sets is checked by checkStrings.
func normalizeItem(name, description *string, status *item.Status) error {
	if name != nil {
		*name = strings.TrimSpace(*name)
		if err := checkText("name", *name, MaxNameLen); err != nil {
			return err
		}
		if *name == "" {
			return apperr.Validation("name", "must not be empty")
		}
	}
	if description != nil {
		if err := checkText("description", *description, MaxDescriptionLen); err != nil {
			return err
		}
	}
	if status != nil {
		if err := item.StatusValidator(*status); err != nil {
			return apperr.Validation("status", "must be one of: active, archived")
		}
	}
	return nil
}

// checkStrings checks every string a mutation sets as checkText does,
// unbounded (a bound is the schema's validator): what a field added to a
// schema takes is stored faithfully or refused naming it.
func checkStrings(m ent.Mutation) error {
	for _, name := range m.Fields() {
		v, _ := m.Field(name)
		if s, ok := v.(string); ok {
			if err := checkText(name, s, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText bounds a text field (max 0: unbounded) and refuses what a database cannot store
// faithfully: invalid UTF-8 and NUL characters.
func checkText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return apperr.Validation(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return apperr.Validation(field, "must not contain NUL characters")
	case max > 0 && utf8.RuneCountInString(s) > max:
		return apperr.Validation(field, fmt.Sprintf("must be at most %d characters", max))
	}
	return nil
}
