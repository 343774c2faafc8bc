package graph

import (
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/internal/service"
)

// setStatus copies the status of CreateItemInput or UpdateItemInput, both
// bound to service.ItemInput, into the service's string: the service
// checks it as it checks REST's. A null status leaves it absent.
func setStatus(in *service.ItemInput, status *item.Status) {
	if status != nil {
		s := status.String()
		in.Status = &s
	}
}
