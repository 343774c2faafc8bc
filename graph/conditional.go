package graph

import (
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
	return service.ParseIfMatch("ifMatch", *v)
}
