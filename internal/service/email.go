package service

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/acme/itemsvc/ent"
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

// CanonicalUserWhere spells every email of a GraphQL users filter (at any
// depth of not, and, or) as canonicalEmail does, so that GraphQL's
// emailHasPrefix finds what REST's email filter finds; an invisible
// character is refused as it is there.
func CanonicalUserWhere(w *ent.UserWhereInput) error {
	if w == nil {
		return nil
	}
	for _, p := range []*string{w.Email, w.EmailNEQ, w.EmailGT, w.EmailGTE, w.EmailLT, w.EmailLTE, w.EmailContains,
		w.EmailHasPrefix, w.EmailHasSuffix, w.EmailEqualFold, w.EmailContainsFold} {
		if p == nil {
			continue
		}
		s, err := canonicalEmail(*p)
		if err != nil {
			return err
		}
		*p = s
	}
	for _, list := range [][]string{w.EmailIn, w.EmailNotIn} {
		for i, e := range list {
			s, err := canonicalEmail(e)
			if err != nil {
				return err
			}
			list[i] = s
		}
	}
	if err := CanonicalUserWhere(w.Not); err != nil {
		return err
	}
	for _, sub := range append(slices.Clone(w.And), w.Or...) {
		if err := CanonicalUserWhere(sub); err != nil {
			return err
		}
	}
	return nil
}
