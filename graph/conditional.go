package graph

import (
	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// ifMatchArg reads the ifMatch argument of updateItem and deleteItem as
// REST reads If-Match: absent is no condition; present, it must name at
// least one etag (or "*"), so an empty string is refused rather than
// taken for no condition.
func ifMatchArg(v *string) (service.Precondition, error) {
	if v == nil {
		return service.Precondition{}, nil
	}
	if *v == "" {
		return service.Precondition{}, apperr.Validation("ifMatch", `must be "*" or one or more Item.etag values`)
	}
	return service.ParseIfMatch(*v)
}

// itemETag is Item.etag. The item of an itemEvents event is rebuilt from the
// event, which carries it in the spec's JSON shape, without its version: its
// tag as of that change is unknown. Rather than a tag that names no version,
// or the current one (which would let a client write over changes it never
// saw), that is an error telling where to read a current tag.
func itemETag(it *ent.Item) (string, error) {
	if it.Version == 0 {
		return "", apperr.Validation("etag", "an item event does not carry the item's version: read item(id) { etag } for its current etag")
	}
	return service.ETag(it), nil
}
