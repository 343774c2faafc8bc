package schema

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/hook"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/itemcount"
)

// itemCounts keeps ItemCount exact: every create, status change and delete
// of items adds its delta to the (owner, status) counters in the transaction
// of the change, so a rolled-back change leaves no trace in them either. An
// item's owner never changes (user_id is immutable), so only its status
// moves it from one counter to another. The counters only ever move by
// atomic increments, which keeps concurrent writers exact; the rows a status
// change or delete reads before writing are locked on PostgreSQL (on SQLite,
// write transactions take the database lock when they begin), so two
// transactions never both count the same change.
func itemCounts() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.ItemFunc(func(ctx context.Context, m *gen.ItemMutation) (ent.Value, error) {
			if !m.InTx() {
				return nil, fmt.Errorf("item %s outside a transaction: %w", m.Op(), errNotInTx)
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
				return v, addCounts(ctx, m, counts{{it.UserID, string(it.Status)}: 1})
			case op.Is(ent.OpUpdate | ent.OpUpdateOne):
				status, set := m.Status()
				if !set {
					return next.Mutate(ctx, m)
				}
				before, err := lockCounted(ctx, m)
				if err != nil {
					return nil, err
				}
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				delta := counts{}
				for _, it := range before {
					if it.Status != string(status) {
						delta[countKey{it.UserID, it.Status}]--
						delta[countKey{it.UserID, string(status)}]++
					}
				}
				return v, addCounts(ctx, m, delta)
			case op.Is(ent.OpDelete | ent.OpDeleteOne):
				before, err := lockCounted(ctx, m)
				if err != nil {
					return nil, err
				}
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				delta := counts{}
				for _, it := range before {
					delta[countKey{it.UserID, it.Status}]--
				}
				return v, addCounts(ctx, m, delta)
			default:
				return next.Mutate(ctx, m)
			}
		})
	}
}

// countKey names one counter.
type countKey struct{ userID, status string }

// countedItem is what the counters need to know of an item.
type countedItem struct {
	ID     string `sql:"id"`
	UserID string `sql:"user_id"`
	Status string `sql:"status"`
}

// counts are deltas to add to counters.
type counts map[countKey]int

// lockCounted reads the owner and status of the items a mutation is about to
// change, locking them (in id order) on PostgreSQL: a concurrent change of
// the same rows then waits for this transaction and reads what it left,
// instead of counting a change this one already counted. The mutation's
// predicates (including the privacy filter) select the rows, as they do for
// the change. A bulk change is then held to the rows that were locked and
// still match, so that it changes exactly what was counted (a row that a
// concurrent writer added or changed meanwhile is not half counted).
func lockCounted(ctx context.Context, m *gen.ItemMutation) ([]countedItem, error) {
	ids, err := m.IDs(ctx)
	if err != nil {
		return nil, err
	}
	var rows []countedItem
	if len(ids) > 0 {
		err = m.Client().Item.Query().
			Where(item.IDIn(ids...)).
			Order(item.ByID()).
			Select(item.FieldID, item.FieldUserID, item.FieldStatus).
			Modify(func(s *sql.Selector) {
				if s.Dialect() == dialect.Postgres {
					s.ForUpdate()
				}
			}).
			Scan(ctx, &rows)
		if err != nil {
			return nil, fmt.Errorf("lock counted items: %w", err)
		}
	}
	if !m.Op().Is(ent.OpUpdate | ent.OpDelete) {
		return rows, nil // one item by id: its id and owner cannot change
	}
	// What matches now, with the locked rows held still.
	now, err := m.IDs(ctx)
	if err != nil {
		return nil, err
	}
	matching := make(map[string]bool, len(now))
	for _, id := range now {
		matching[id] = true
	}
	rows = slices.DeleteFunc(rows, func(r countedItem) bool { return !matching[r.ID] })
	held := make([]string, len(rows))
	for i, r := range rows {
		held[i] = r.ID
	}
	m.Where(item.IDIn(held...))
	return rows, nil
}

// addCounts adds the deltas to their counters with one upsert
// (INSERT … ON CONFLICT (user_id, status, slot) DO UPDATE SET count = count +
// excluded.count), creating the counter rows it needs. All deltas of one
// call go to one slot (counterSlot): a row lock is held to commit on
// PostgreSQL, and one owner's concurrent writers, on different slots, do not
// wait for each other. Rows go in key order, one slot for all, so that
// concurrent transactions lock counters in one order, (user_id, status,
// slot), and cannot deadlock on them. Counters are written by the system, not
// the viewer, and have no hooks, so the upsert runs as the statement ent's
// bulk upsert would make (less its RETURNING id, which nothing reads), kept
// per dialect and row count rather than built anew by each write.
func addCounts(ctx context.Context, c statements, delta counts) error {
	keys := make([]countKey, 0, len(delta))
	for k, n := range delta {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.userID, b.userID), cmp.Compare(a.status, b.status))
	})
	slot := counterSlot(c.Dialect())
	args := make([]any, 0, 4*len(keys))
	for _, k := range keys {
		args = append(args, delta[k], k.status, k.userID, slot)
	}
	if _, err := c.ExecContext(ctx, addCountsSQL(c.Dialect(), len(keys)), args...); err != nil {
		return fmt.Errorf("count items: %w", err)
	}
	return nil
}

// counterSlots is how many rows share the count of one owner and status on
// PostgreSQL. With one row, one owner's concurrent creates queued on it,
// each holding it for its commit's round trip. Taken in turn, 32 slots keep
// the writers of a pool of 64 (DATABASE_MAX_CONNS) two to a row, and one
// owner's creates then keep pace with those of many (make bench's pgwrites
// row; docs/development.md, Item totals, has the figures). A read sums at
// most 32 rows per owner and status, one index range.
const counterSlots = 32

// nextSlot turns the slots over, so that writes that start together take
// different ones (a random pick would put several on one slot by chance).
var nextSlot atomic.Uint32

// counterSlot is the slot the next counting write adds to: SQLite takes one
// writer at a time, so one row per owner and status costs no waiting and
// reads stay at one row.
func counterSlot(d string) int {
	if d != dialect.Postgres {
		return 0
	}
	return int(nextSlot.Add(1) % counterSlots)
}

// addCountsSQL is the upsert of rows counters, each given as (count,
// status, user_id, slot).
func addCountsSQL(d string, rows int) string {
	return statement(statementShape{"counts", d, rows}, func() string {
		ins := sql.Dialect(d).Insert(itemcount.Table).
			Columns(itemcount.FieldCount, itemcount.FieldStatus, itemcount.FieldUserID, itemcount.FieldSlot)
		for range rows {
			ins.Values(placeholders(4)...)
		}
		q, _ := ins.OnConflict(
			sql.ConflictColumns(itemcount.FieldUserID, itemcount.FieldStatus, itemcount.FieldSlot),
			sql.ResolveWith(func(u *sql.UpdateSet) {
				u.Set(itemcount.FieldCount, sql.Expr(u.Table().C(itemcount.FieldCount)+" + "+sql.Dialect(u.Dialect()).Table("excluded").C(itemcount.FieldCount)))
			}),
		).Query()
		return q
	})
}
