package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/internal/apperr"
)

// ETag is the entity tag of an item as it is now (RFC 9110 §8.8.3): strong,
// quoted, and opaque, a hash of the item's id and version. The version moves
// on every change (ent/schema/itemversion.go), so the tag does too, and two
// items never share one. REST sends it as the ETag header, GraphQL as
// Item.etag; either is good for If-Match and ifMatch on both.
func ETag(it *ent.Item) string {
	sum := sha256.Sum256([]byte(it.ID + "\x00" + strconv.Itoa(it.Version)))
	return `"` + hex.EncodeToString(sum[:10]) + `"`
}

// entityTag is one element of an If-Match or If-None-Match list.
type entityTag struct {
	weak   bool
	opaque string // with its quotes, as ETag writes it
}

// tagList is a parsed If-Match or If-None-Match value: "*" or entity tags.
type tagList struct {
	any  bool
	tags []entityTag
}

// parseTagList parses the value of a conditional header, field naming it
// for the error: "*" or a comma-separated list of entity tags, weak (W/"…")
// or strong ("…"), as RFC 9110 §13.1 writes them. Anything else is a
// VALIDATION_ERROR rather than a condition silently ignored.
func parseTagList(field, value string) (tagList, error) {
	v := strings.Trim(value, " \t")
	if v == "*" {
		return tagList{any: true}, nil
	}
	var l tagList
	for v != "" {
		v = strings.TrimLeft(v, " \t,")
		if v == "" {
			break
		}
		var t entityTag
		if strings.HasPrefix(v, "W/") {
			t.weak, v = true, v[2:]
		}
		end := -1
		if strings.HasPrefix(v, `"`) {
			end = strings.IndexByte(v[1:], '"')
		}
		if end < 0 {
			return tagList{}, apperr.Validation(field, `must be "*" or a list of quoted entity tags, such as the ETag of the item`)
		}
		t.opaque, v = v[:end+2], v[end+2:]
		for _, c := range []byte(t.opaque[1 : len(t.opaque)-1]) {
			if c < 0x21 || c == 0x7f {
				return tagList{}, apperr.Validation(field, "an entity tag holds no spaces or control characters")
			}
		}
		l.tags = append(l.tags, t)
		v = strings.TrimLeft(v, " \t")
		if v != "" && v[0] != ',' {
			return tagList{}, apperr.Validation(field, "entity tags are separated by commas")
		}
	}
	if len(l.tags) == 0 {
		return tagList{}, apperr.Validation(field, `must be "*" or a list of quoted entity tags, such as the ETag of the item`)
	}
	return l, nil
}

// match tells whether the list names etag (as ETag writes it): strong
// comparison refuses weak tags on either side (If-Match, §13.1.1), weak
// comparison compares opaque tags alone (If-None-Match, §13.1.2).
func (l tagList) match(etag string, weak bool) bool {
	if l.any {
		return true
	}
	opaque, etagWeak := strings.CutPrefix(etag, "W/")
	for _, t := range l.tags {
		if t.opaque == opaque && (weak || !t.weak && !etagWeak) {
			return true
		}
	}
	return false
}

// Precondition is an If-Match on a change of one item: the change is made
// only if the item's ETag is one it names (or, for "*", if the item exists),
// checked in the change's transaction against the row it writes. The zero
// Precondition is no condition.
type Precondition struct {
	on   bool
	tags tagList
}

// ifMatch is the service's name of a Precondition, HTTP's: REST reads it
// from that header, GraphQL from its ifMatch argument.
const ifMatch = "If-Match"

// ParseIfMatch reads an If-Match value (a header's, or GraphQL's ifMatch).
// An empty value is no condition.
func ParseIfMatch(value string) (Precondition, error) {
	if value == "" {
		return Precondition{}, nil
	}
	l, err := parseTagList(ifMatch, value)
	if err != nil {
		return Precondition{}, err
	}
	return Precondition{on: true, tags: l}, nil
}

// set tells whether p is a condition at all.
func (p Precondition) set() bool { return p.on }

// check refuses, with PRECONDITION_FAILED, an item p does not name.
func (p Precondition) check(it *ent.Item) error {
	if !p.set() || p.tags.match(ETag(it), false) {
		return nil
	}
	return p.failed()
}

// failed is the error of a change whose condition no longer holds.
func (p Precondition) failed() error { return apperr.PreconditionFailed(ifMatch) }

// raced explains a conditional write of item id that found no row, notFound
// being its error: another transaction changed the item after this one
// checked it (PRECONDITION_FAILED), or deleted it, which is NOT_FOUND as it
// is for a change that comes after the delete. The check is a new statement,
// so it sees what the other transaction committed.
func (p Precondition) raced(ctx context.Context, tx *ent.Tx, id string, notFound error) error {
	exists, err := tx.Item.Query().Where(item.ID(id)).Exist(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("recheck item: %w", err)
	case exists:
		return p.failed()
	default:
		return notFound
	}
}

// NoneMatch reports whether an If-None-Match value names etag by weak
// comparison, as a GET with it must (RFC 9110 §13.1.2): then the client's
// copy is current and the answer is 304 Not Modified. An empty value names
// nothing.
func NoneMatch(value, etag string) (bool, error) {
	if value == "" {
		return false, nil
	}
	l, err := parseTagList("If-None-Match", value)
	if err != nil {
		return false, err
	}
	return l.match(etag, true), nil
}

// PageETag is the weak entity tag of a page of a list: a hash of what the
// page shows that can change, its total, where the next page starts and the
// id and version of each item in order. Two reads of a list under the same
// query get the same tag exactly when they would render the same items,
// total and cursor. Weak, because the envelope around them (its timestamp)
// differs, and it is only for If-None-Match.
func PageETag(p ItemPage) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(p.Total)))
	if p.Next != nil {
		h.Write([]byte("\x00" + p.Next.Encode()))
	}
	for _, it := range p.Items {
		h.Write([]byte("\x00" + it.ID + "\x00" + strconv.Itoa(it.Version)))
	}
	return `W/"` + hex.EncodeToString(h.Sum(nil)[:10]) + `"`
}
