package testutil

import (
	"context"
	"time"

	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/events"
)

// WaitPublished waits until every event committed so far is published
// (events.Published). On PostgreSQL a feed shows an event once every
// transaction older than its own has ended, on any database of the server:
// a test that reads a feed right after its writes, or opens a stream "from
// now" that must not get them, waits for them first. Immediate on SQLite.
func (e *Env) WaitPublished() {
	e.T.Helper()
	if !OnPostgres() {
		return
	}
	ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
	held := func() bool {
		found, err := e.App.DB.Client.Event.Query().Where(event.Not(events.Published())).Exist(ctx)
		if err != nil {
			e.T.Fatalf("look for held-back events: %v", err)
		}
		return found
	}
	if !Eventually(e.T, 30*time.Second, func() bool { return !held() }) {
		e.T.Fatal("events still held back after 30s: a transaction on the PostgreSQL server stays open")
	}
}
