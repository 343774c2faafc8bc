package service

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema"
	"github.com/acme/itemsvc/internal/apperr"
)

// Bounds of item fields, in characters, as the schema declares them.
const (
	MaxNameLen        = schema.ItemNameMax
	MaxDescriptionLen = schema.ItemDescriptionMax
)

// normalize trims the name and checks every present field, naming the first
// bad one.
func (in *ItemInput) normalize() error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if err := checkText("name", name, MaxNameLen); err != nil {
			return err
		}
		if name == "" {
			return apperr.Validation("name", "must not be empty")
		}
		in.Name = &name
	}
	if in.Description != nil {
		if err := checkText("description", *in.Description, MaxDescriptionLen); err != nil {
			return err
		}
	}
	if in.Status != nil {
		if err := item.StatusValidator(item.Status(*in.Status)); err != nil {
			return apperr.Validation("status", "must be one of: active, archived")
		}
	}
	return nil
}

// checkText bounds a text field and refuses what a database cannot store
// faithfully: invalid UTF-8 and NUL characters.
func checkText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return apperr.Validation(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return apperr.Validation(field, "must not contain NUL characters")
	case utf8.RuneCountInString(s) > max:
		return apperr.Validation(field, fmt.Sprintf("must be at most %d characters", max))
	}
	return nil
}
