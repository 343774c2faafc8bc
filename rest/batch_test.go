package rest_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/auditevent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/idempotencykey"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// batchRow is one request sent while the writers are held at the gate.
type batchRow struct {
	name   string
	req    testutil.Request
	status int // 0: either of alt
	alt    [2]int
}

// sendHeld holds the database's writers, sends the rows at once, lets the
// writers go once at least queued of them wait at the gate (so that they
// share one batch on SQLite), and returns each row's response.
func sendHeld(t *testing.T, env *testutil.Env, queued int, rows []batchRow) []*testutil.Response {
	t.Helper()
	env.App.Service.Wait() // no login's key touch in flight
	release, err := env.App.DB.HoldWrites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*testutil.Response, len(rows))
	var wg sync.WaitGroup
	for i, r := range rows {
		wg.Go(func() { out[i] = env.Do(r.req) })
	}
	if env.App.DB.Dialect == "sqlite" {
		testutil.Eventually(t, 10*time.Second, func() bool { return env.App.DB.QueuedWriters() >= queued })
	}
	release()
	wg.Wait()
	for i, r := range rows {
		ok := out[i].Status == r.status || (r.status == 0 && (out[i].Status == r.alt[0] || out[i].Status == r.alt[1]))
		if !ok {
			t.Errorf("%s: %d %s, want %d%v", r.name, out[i].Status, out[i].Body, r.status, r.alt)
		}
	}
	return out
}

// TestBatchMembersFailAlone: requests whose transactions share one SQLite
// commit (group commit) succeed or fail each on its own. One row per way a
// request fails inside the batch: its change and everything it wrote with
// it (event, audit record, idempotency record) leave no trace, and the
// changes of the requests before and after it in the batch are committed,
// each with its event. On PostgreSQL, with no batches, the same holds.
func TestBatchMembersFailAlone(t *testing.T) {
	env := testutil.New(t, noRateLimit, testutil.WithConfig(func(c *config.Config) {
		c.DatabaseBatchWindow = time.Minute // the batch ends when no writer waits
	}))
	ctx := testutil.SystemContext(t)
	alice, bob, admin := env.Alice, env.Bob, env.Admin
	renamed := env.CreateItem(alice, "to rename")
	deleted := env.CreateItem(alice, "to delete")
	kept := env.CreateItem(alice, "kept")
	keptTag := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + kept, Token: alice.Token}).Header.Get("ETag")
	if r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + kept, Token: alice.Token, Body: map[string]any{"name": "kept!"}}); r.Status != http.StatusOK {
		t.Fatalf("touch: %d %s", r.Status, r.Body)
	}
	keptItem := env.App.DB.Client.Item.GetX(ctx, kept)
	before := env.Scrape()

	rows := []batchRow{
		{name: "create", req: testutil.Request{Method: "POST", Path: "/v1/items", Token: alice.Token, Body: map[string]any{"name": "batched a"}}, status: 201},
		{name: "if-match mismatch", req: testutil.Request{Method: "PUT", Path: "/v1/items/" + kept, Token: alice.Token, Body: map[string]any{"name": "stale"}, Headers: map[string]string{"If-Match": keptTag}}, status: 412},
		{name: "create by another owner", req: testutil.Request{Method: "POST", Path: "/v1/items", Token: bob.Token, Body: map[string]any{"name": "batched b"}}, status: 201},
		{name: "privacy refusal", req: testutil.Request{Method: "PUT", Path: "/v1/items/" + kept, Token: bob.Token, Body: map[string]any{"name": "not bob's"}}, status: 403},
		{name: "update", req: testutil.Request{Method: "PUT", Path: "/v1/items/" + renamed, Token: alice.Token, Body: map[string]any{"name": "renamed"}}, status: 200},
		{name: "user created", req: testutil.Request{Method: "POST", Path: "/v1/users", Token: admin.Token, Body: map[string]any{"email": "carol@example.com", "name": "Carol"}}, alt: [2]int{201, 400}},
		{name: "email taken in the batch", req: testutil.Request{Method: "POST", Path: "/v1/users", Token: admin.Token, Body: map[string]any{"email": "Carol@example.com", "name": "Carol again"}}, alt: [2]int{201, 400}},
		{name: "delete", req: testutil.Request{Method: "DELETE", Path: "/v1/items/" + deleted, Token: alice.Token}, status: 200},
		{name: "validation error", req: testutil.Request{Method: "POST", Path: "/v1/items", Token: alice.Token, Body: map[string]any{"name": ""}}, status: 400},
	}
	out := sendHeld(t, env, 8, rows)
	if (out[5].Status == 201) == (out[6].Status == 201) {
		t.Errorf("the two creates of one email: %d and %d, want one 201 and one 400", out[5].Status, out[6].Status)
	}

	if env.App.DB.Dialect == "sqlite" {
		after := env.Scrape()
		delta := func(name string) float64 { return after.Value(name, nil) - before.Value(name, nil) }
		if c, m, r := delta("itemsvc_sqlite_commits_total"), delta("itemsvc_sqlite_committed_transactions_total"), delta("itemsvc_sqlite_rolled_back_transactions_total"); c != 1 || m != 5 || r != 3 {
			t.Errorf("%v commits of %v transactions, %v rolled back; want the 8 in one batch: 1 commit of 5, 3 rolled back", c, m, r)
		}
	}

	// The failures left nothing.
	if got := env.App.DB.Client.Item.GetX(ctx, kept); got.Name != "kept!" || got.Version != keptItem.Version {
		t.Errorf("the refused updates changed the item: %q v%d, was v%d", got.Name, got.Version, keptItem.Version)
	}
	if n := env.App.DB.Client.Event.Query().Where(event.ItemID(kept)).CountX(ctx); n != 2 {
		t.Errorf("%d events of the item the batch refused to change, want 2 (created, touched)", n)
	}
	if n := env.App.DB.Client.User.Query().Where(user.Email("carol@example.com")).CountX(ctx); n != 1 {
		t.Errorf("%d users carol@example.com, want 1", n)
	}
	if n := env.App.DB.Client.AuditEvent.Query().Where(auditevent.Action("user.created"), auditevent.ActorID(admin.UserID)).CountX(ctx); n != 1 {
		t.Errorf("%d user.created audit records, want 1 (the refused create left none)", n)
	}
	if n := env.App.DB.Client.Item.Query().Where(item.Name("")).CountX(ctx); n != 0 {
		t.Errorf("%d items with an empty name", n)
	}
	// The others committed, each with its event.
	for _, c := range []struct{ name, typ string }{{"batched a", "item.created"}, {"batched b", "item.created"}} {
		it, err := env.App.DB.Client.Item.Query().Where(item.Name(c.name)).Only(ctx)
		if err != nil {
			t.Errorf("item %q: %v", c.name, err)
			continue
		}
		if n := env.App.DB.Client.Event.Query().Where(event.ItemID(it.ID), event.Type(c.typ)).CountX(ctx); n != 1 {
			t.Errorf("%d %s events of %q, want 1", n, c.typ, c.name)
		}
	}
	if got := env.App.DB.Client.Item.GetX(ctx, renamed); got.Name != "renamed" {
		t.Errorf("the update in the batch: name %q", got.Name)
	}
	if n := env.App.DB.Client.Event.Query().Where(event.ItemID(renamed), event.Type("item.updated")).CountX(ctx); n != 1 {
		t.Errorf("%d item.updated events of the renamed item, want 1", n)
	}
	if n := env.App.DB.Client.Item.Query().Where(item.ID(deleted)).CountX(ctx); n != 0 {
		t.Errorf("the deleted item is still there")
	}
	if n := env.App.DB.Client.Event.Query().Where(event.ItemID(deleted), event.Type("item.deleted")).CountX(ctx); n != 1 {
		t.Errorf("%d item.deleted events, want 1", n)
	}

	// Under an Idempotency-Key a failed request stores no record, and its
	// neighbour's is stored.
	key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }
	withKey := func(r testutil.Request, k string) testutil.Request { r.Headers = key(k); return r }
	stale := rows[1].req
	stale.Headers = map[string]string{"If-Match": keptTag, "Idempotency-Key": "k-stale"}
	sendHeld(t, env, 3, []batchRow{
		{name: "create with a key", req: withKey(rows[0].req, "k-ok"), status: 201},
		{name: "if-match mismatch with a key", req: stale, status: 412},
		{name: "privacy refusal with a key", req: withKey(rows[3].req, "k-refused"), status: 403},
		{name: "validation error with a key", req: withKey(rows[8].req, "k-invalid"), status: 400},
	})
	for k, want := range map[string]int{"k-ok": 1, "k-stale": 0, "k-refused": 0, "k-invalid": 0} {
		if n := env.App.DB.Client.IdempotencyKey.Query().Where(idempotencykey.Key(k)).CountX(ctx); n != want {
			t.Errorf("%d idempotency records of %s, want %d", n, k, want)
		}
	}
}
