package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/hook"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/setting"
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
	last, err := takeEventSeq(ctx, c, len(items))
	if err != nil {
		return err
	}
	first := last - int64(len(items)) + 1
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
			SetData(string(data)).
			SetSeq(first + int64(i))
	}
	if len(builders) == 1 {
		return builders[0].Exec(ctx)
	}
	return c.Event.CreateBulk(builders...).Exec(ctx)
}

// EventSeqSetting is the Setting that holds the last seq given to an event.
const EventSeqSetting = "event_seq"

// takeEventSeq reserves n event seqs and returns the last one. The counter
// is one row that every writer of events updates, late in its transaction:
// on PostgreSQL the row lock is held until commit, so a transaction that
// takes seqs waits for the one before it to commit or roll back, and seq
// order is commit order (a reader that sees seq n sees every lower one that
// will ever commit); on SQLite write transactions are serial anyway. Event
// feeds resume from seq without gaps because of this.
//
// One statement, UPDATE … RETURNING, both moves the counter and reads it
// (ent's update builder returns only a row count, and a SELECT after it was
// a second statement in every write). It is the update ent would run, with
// updated_at set as the Setting's UpdateDefault sets it.
func takeEventSeq(ctx context.Context, c *gen.Client, n int) (int64, error) {
	query, args := sql.Dialect(c.Dialect()).
		Update(setting.Table).
		Set(setting.FieldUpdatedAt, now()).
		Set(setting.FieldValue, sql.ExprFunc(func(b *sql.Builder) {
			b.WriteString("CAST(CAST(").Ident(setting.FieldValue).WriteString(" AS bigint) + ").Arg(n).WriteString(" AS text)")
		})).
		Where(sql.EQ(setting.FieldID, EventSeqSetting)).
		Returning(setting.FieldValue).
		Query()
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("take event seq: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("take event seq: %w", err)
		}
		// Only a database whose counter was removed by hand gets here:
		// the migration that added seq created it.
		return 0, fmt.Errorf("take event seq: setting %q is missing", EventSeqSetting)
	}
	var v string
	if err := rows.Scan(&v); err != nil {
		return 0, fmt.Errorf("read event seq: %w", err)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("take event seq: %w", err)
	}
	last, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("event seq %q: %w", v, err)
	}
	return last, nil
}
