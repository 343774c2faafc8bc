package service

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/acme/itemsvc/internal/apperr"
)

// canonicalEmail is the one spelling under which an address is stored and
// looked up, so that addresses a person reads as the same are one user:
// compatibility forms folded (NFKC: fullwidth ａ is a, a decomposed é the
// composed one), lower case. Invisible characters (Unicode's format
// characters: zero-width spaces and joiners, the BOM, soft hyphens) are
// refused rather than dropped, naming email: an address that carries one was
// not typed, and silently writing another one than the client sent would
// hide that. Every place that takes an email from outside (CreateUser,
// CreateKey for the CLI and first start, findUser, FindKeys, the users'
// email filter) goes through here.
func canonicalEmail(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", apperr.Validation("email", "must be valid UTF-8")
	}
	// Lower case can leave a string that NFKC changes again (İ lowers to
	// i and a combining dot), hence the second pass.
	s = norm.NFKC.String(strings.ToLower(norm.NFKC.String(strings.TrimSpace(s))))
	for _, r := range s {
		if r == 0 || unicode.Is(unicode.Cf, r) {
			return "", apperr.Validation("email", fmt.Sprintf("must not contain invisible characters (U+%04X)", r))
		}
	}
	return s, nil
}

// normalizeEmail is canonicalEmail of an address to store: it must be one.
func normalizeEmail(s string) (string, error) {
	email, err := canonicalEmail(s)
	if err != nil {
		return "", err
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return "", apperr.Validation("email", "must be an email address")
	}
	return email, nil
}
