package resource

import (
	"encoding/json"
	"fmt"

	"github.com/acme/itemsvc/ent"
)

// DecodeItem reads an item as NewItem rendered it (the item of an event, as
// the outbox stores it) back into an ent item, for GraphQL, whose Item is
// ent's. It copies no field by hand: Item's JSON names are ent's own
// (TestItemCoversEnt holds them to it), so a field added to both arrives
// without a change here.
func DecodeItem(data []byte) (*ent.Item, error) {
	var it ent.Item
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, fmt.Errorf("decode item: %w", err)
	}
	return &it, nil
}
