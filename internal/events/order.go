package events

import (
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/predicate"
)

// Position is an event's place in the order every feed shows: by the
// writing transaction's id, then by seq (ent/schema/event.go). On SQLite
// xid is always 0 and seq is the commit order; on PostgreSQL writers take
// seqs side by side, and Published keeps a reader from seeing an event
// before every event that will come before it has committed or rolled back.
type Position struct {
	Xid, Seq int64
}

// PositionOf is where r stands in the feeds' order.
func PositionOf(r *ent.Event) Position { return Position{Xid: r.Xid, Seq: r.Seq} }

// Position is where the event stands in the feeds' order.
func (ev Event) Position() Position { return Position{Xid: ev.Xid, Seq: ev.Seq} }

// IsZero reports the position before every event: "from now on" for a
// subscription.
func (p Position) IsZero() bool { return p == Position{} }

// Less reports whether p comes before q.
func (p Position) Less(q Position) bool {
	return p.Xid < q.Xid || (p.Xid == q.Xid && p.Seq < q.Seq)
}

// After keeps the events past p.
func After(p Position) predicate.Event {
	return func(s *sql.Selector) {
		s.Where(sql.CompositeGT([]string{s.C(event.FieldXid), s.C(event.FieldSeq)}, p.Xid, p.Seq))
	}
}

// Before keeps the events before p.
func Before(p Position) predicate.Event {
	return func(s *sql.Selector) {
		s.Where(sql.CompositeLT([]string{s.C(event.FieldXid), s.C(event.FieldSeq)}, p.Xid, p.Seq))
	}
}

// Ascending orders events as the feeds show them, Descending newest first.
var (
	Ascending  = []event.OrderOption{event.ByXid(), event.BySeq()}
	Descending = []event.OrderOption{event.ByXid(sql.OrderDesc()), event.BySeq(sql.OrderDesc())}
)

// Published keeps the events that can no longer be preceded by another:
// on PostgreSQL, those whose transaction is older than every transaction
// still open when the reading statement took its snapshot
// (pg_snapshot_xmin). Each of those transactions has committed (its events
// are visible to the statement) or rolled back (it has none), and every
// transaction that will ever write an event gets a larger id, so an event
// that passes this filter has every event before it in the order already
// visible, and none will be written before it later. A reader that resumes
// past any position it was shown therefore never misses nor repeats one.
//
// The price is that the feeds trail the oldest open transaction of the
// PostgreSQL server (of any database on it): an event shows once every
// transaction older than its own has ended (docs/events.md). On SQLite,
// whose writers are serial, every committed event is published.
func Published() predicate.Event {
	return func(s *sql.Selector) {
		if s.Dialect() != dialect.Postgres {
			return
		}
		s.Where(sql.P(func(b *sql.Builder) {
			b.Ident(s.C(event.FieldXid)).WriteString(" < CAST(CAST(pg_snapshot_xmin(pg_current_snapshot()) AS text) AS bigint)")
		}))
	}
}
