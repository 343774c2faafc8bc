package schema

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"go.opentelemetry.io/otel/trace"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
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

// statements runs what ent has no builder for, in the transaction of a
// mutation (the mutation itself has these methods: taking its Client would
// build a client for every entity).
type statements interface {
	Dialect() string
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
}

// errNotInTx is why an item mutation outside a transaction is refused.
var errNotInTx = errors.New("ent: mutation is not running in a transaction")

// itemEvents writes an outbox event for every item change, in the transaction
// of the change: the change and its event commit together or not at all,
// whichever transport made the change. A mutation outside a transaction is
// refused rather than allowed to lose its event.
func itemEvents() ent.Hook {
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
				return v, recordEvents(ctx, m, EventItemCreated, it)
			case op.Is(ent.OpUpdateOne):
				v, err := next.Mutate(ctx, m)
				if err != nil {
					return nil, err
				}
				it, ok := v.(*gen.Item)
				if !ok {
					return nil, fmt.Errorf("item update returned %T", v)
				}
				return v, recordEvents(ctx, m, EventItemUpdated, it)
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
				return v, recordEvents(ctx, m, EventItemUpdated, items...)
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
				return v, recordEvents(ctx, m, EventItemDeleted, items...)
			default:
				return next.Mutate(ctx, m)
			}
		})
	}
}

// recordEvents inserts one outbox row per item. Events are written by the
// system, not the viewer, so the insert is allowed past the Event policy.
//
// The rows are written by the statement ent's builder would make, without
// the builder (insertEventsSQL): an event needs none of what the builder
// does per call (the Event policy allows the system, and its only hook sets
// updated_at to created_at, as the arguments do), and building the
// statement anew was a tenth of a create's allocations.
func recordEvents(ctx context.Context, m *gen.ItemMutation, typ string, items ...*gen.Item) error {
	if len(items) == 0 {
		return nil
	}
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	serial := m.Dialect() != dialect.Postgres
	var first int64
	if serial {
		last, err := takeEventSeq(ctx, m, len(items))
		if err != nil {
			return err
		}
		first = last - int64(len(items)) + 1
	}
	t := event.DefaultCreatedAt()
	per := 8 // arguments of a row: see insertEventsSQL
	if serial {
		per = 10
	}
	parent := traceParent(ctx)
	args := make([]any, 0, per*len(items))
	for i, it := range items {
		data, err := json.Marshal(resource.NewItem(it))
		if err != nil {
			return fmt.Errorf("encode %s event: %w", typ, err)
		}
		args = append(args, t, t, typ, it.UserID, it.ID, string(data))
		if serial {
			args = append(args, int64(0), first+int64(i))
		}
		args = append(args, event.DefaultID(), parent)
	}
	if _, err := m.ExecContext(ctx, insertEventsSQL(m.Dialect(), len(items)), args...); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

// insertEventsSQL is the INSERT of rows events, as ent's builder writes it;
// each row's arguments are created_at, updated_at (the same: the Event
// schema's hook), type, user_id, item_id, data, then on SQLite xid (0) and
// seq, a new evt_ id and the traceparent of the writing span (or NULL).
//
// On PostgreSQL the statement itself sets xid and seq: xid to the writing
// transaction's id, seq to the next number of the sequence event_seq. Neither
// waits for another writer (a sequence hands out numbers without a lock held
// to commit), which is what lets writers on every replica run side by side;
// the feeds' order comes from reading them (internal/events, order.go).
func insertEventsSQL(d string, rows int) string {
	return statement(statementShape{"events", d, rows}, func() string {
		ins := sql.Dialect(d).Insert(event.Table).
			Columns(event.FieldCreatedAt, event.FieldUpdatedAt, event.FieldType, event.FieldUserID,
				event.FieldItemID, event.FieldData, event.FieldXid, event.FieldSeq, event.FieldID, event.FieldTraceParent)
		for range rows {
			v := placeholders(10)
			if d == dialect.Postgres {
				v[6], v[7] = sql.Raw(xidExpr), sql.Raw("nextval('"+EventSeqSequence+"')")
			}
			ins.Values(v...)
		}
		q, _ := ins.Query()
		return q
	})
}

// traceParent is the W3C traceparent of the span recording the change, for
// Event.trace_parent, or nil (NULL) when no span records it: tracing off or
// the request not sampled.
func traceParent(ctx context.Context) any {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsSampled() {
		return nil
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// xidExpr is the id of the current transaction as a bigint (xid8 has no
// cast to it but through text).
const xidExpr = "CAST(CAST(pg_current_xact_id() AS text) AS bigint)"

// EventSeqSequence is the PostgreSQL sequence events take their seq from
// (the migration event_xid made it, starting past the last seq given).
const EventSeqSequence = "events_seq"

// builtStatements caches what statement builds: the SQL of a write depends only
// on its kind, dialect and row count, so it is built once per shape.
var builtStatements sync.Map // statementShape -> string

type statementShape struct {
	kind    string
	dialect string
	rows    int
}

// statement returns the SQL of shape, building it on first use.
func statement(shape statementShape, build func() string) string {
	if q, ok := builtStatements.Load(shape); ok {
		return q.(string)
	}
	q := build()
	builtStatements.Store(shape, q)
	return q
}

// placeholders are n arguments for a builder that only makes the statement:
// each becomes a placeholder (nil would become NULL).
func placeholders(n int) []any {
	args := make([]any, n)
	for i := range args {
		args[i] = ""
	}
	return args
}

// takeEventSeqSQL is takeEventSeq's UPDATE … RETURNING per dialect; its
// arguments are updated_at, the number of seqs to take and the setting's id.
var takeEventSeqSQL = func() map[string]string {
	m := map[string]string{}
	for _, d := range []string{dialect.SQLite} {
		m[d], _ = sql.Dialect(d).
			Update(setting.Table).
			Set(setting.FieldUpdatedAt, "").
			Set(setting.FieldValue, sql.ExprFunc(func(b *sql.Builder) {
				b.WriteString("CAST(CAST(").Ident(setting.FieldValue).WriteString(" AS bigint) + ").Arg("").WriteString(" AS text)")
			})).
			Where(sql.EQ(setting.FieldID, "")).
			Returning(setting.FieldValue).
			Query()
	}
	return m
}()

// EventSeqSetting is the Setting that holds the last seq given to an event
// on SQLite.
const EventSeqSetting = "event_seq"

// takeEventSeq reserves n event seqs and returns the last one: the serial
// path of SQLite, whose write transactions take the database's write lock
// up front (one writer at a time), so seq order is commit order and a reader
// that sees seq n sees every lower one that will ever commit. PostgreSQL
// does not come here: there the counter's row lock, held until commit, made
// every writer in the cluster wait for the one before it
// (insertEventsSQL).
//
// One statement, UPDATE … RETURNING, both moves the counter and reads it
// (ent's update builder returns only a row count, and a SELECT after it was
// a second statement in every write). It is the update ent would run, with
// updated_at set as the Setting's UpdateDefault sets it, built once per
// dialect (takeEventSeqSQL).
func takeEventSeq(ctx context.Context, c statements, n int) (int64, error) {
	query, ok := takeEventSeqSQL[c.Dialect()]
	if !ok {
		return 0, fmt.Errorf("take event seq: no statement for dialect %q", c.Dialect())
	}
	args := []any{Now(), n, EventSeqSetting}
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
