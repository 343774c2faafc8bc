package schema

import (
	"context"
	"encoding/json"
	"fmt"

	"entgo.io/ent"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/hook"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/resource"
)

// The item event types of the spec.
const (
	EventItemCreated = "item.created"
	EventItemUpdated = "item.updated"
	EventItemDeleted = "item.deleted"
)

// itemEvents writes an outbox event for every item change, in the transaction
// of the change: the change and its event commit together or not at all,
// whichever transport made the change. A mutation outside a transaction is
// refused rather than allowed to lose its event.
func itemEvents() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.ItemFunc(func(ctx context.Context, m *gen.ItemMutation) (ent.Value, error) {
			if _, err := m.Tx(); err != nil {
				return nil, fmt.Errorf("item %s outside a transaction: %w", m.Op(), err)
			}
			switch op := m.Op(); {
			case op.Is(ent.OpCreate):
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				it, ok := v.(*gen.Item)
				if !ok {
					return nil, fmt.Errorf("item create returned %T", v)
				}
				return v, recordEvents(ctx, m.Client(), EventItemCreated, it)
			case op.Is(ent.OpUpdateOne):
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				it, ok := v.(*gen.Item)
				if !ok {
					return nil, fmt.Errorf("item update returned %T", v)
				}
				return v, recordEvents(ctx, m.Client(), EventItemUpdated, it)
			case op.Is(ent.OpUpdate):
				ids, err := m.IDs(ctx)
				if err != nil {
					return nil, err
				}
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				items, err := m.Client().Item.Query().Where(item.IDIn(ids...)).All(ctx)
				if err != nil {
					return nil, err
				}
				return v, recordEvents(ctx, m.Client(), EventItemUpdated, items...)
			case op.Is(ent.OpDelete | ent.OpDeleteOne):
				ids, err := m.IDs(ctx)
				if err != nil {
					return nil, err
				}
				// Read before the delete: item.deleted carries the item as it was.
				items, err := m.Client().Item.Query().Where(item.IDIn(ids...)).All(ctx)
				if err != nil {
					return nil, err
				}
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				return v, recordEvents(ctx, m.Client(), EventItemDeleted, items...)
			default:
				return next.Mutate(ctx, m)
			}
		})
	}
}

// recordEvents inserts one outbox row per item. Events are written by the
// system, not the viewer, so the insert is allowed past the Event policy.
func recordEvents(ctx context.Context, c *gen.Client, typ string, items ...*gen.Item) error {
	if len(items) == 0 {
		return nil
	}
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	builders := make([]*gen.EventCreate, len(items))
	for i, it := range items {
		data, err := json.Marshal(resource.NewItem(it))
		if err != nil {
			return fmt.Errorf("encode %s event: %w", typ, err)
		}
		builders[i] = c.Event.Create().
			SetType(typ).
			SetUserID(it.UserID).
			SetItemID(it.ID).
			SetData(string(data))
	}
	if len(builders) == 1 {
		return builders[0].Exec(ctx)
	}
	return c.Event.CreateBulk(builders...).Exec(ctx)
}
