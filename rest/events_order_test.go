package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// feedReader follows GET /v1/events on one server from a cursor, as a
// client polling for what it missed does: each poll reads every page after
// its cursor (newest first), then moves the cursor to the newest.
type feedReader struct {
	h      http.Handler
	token  string
	from   string   // the cursor it started after; "" from the start
	after  string   // the cursor it resumes after
	events []string // what it got, oldest first: "id type:name"
	polls  atomic.Int64
}

// poll reads what was published after the cursor.
func (r *feedReader) poll() error {
	var got []string
	cursor := ""
	for {
		path := "/v1/events?limit=50"
		if r.after != "" {
			path += "&after=" + r.after
		}
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+r.token)
		rec := httptest.NewRecorder()
		r.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		var body struct {
			Data []eventRow
			Meta struct {
				Pagination struct {
					NextCursor *string `json:"next_cursor"`
				}
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			return err
		}
		for _, e := range body.Data {
			got = append(got, e.ID+" "+e.Event+":"+e.Data.Name)
		}
		if body.Meta.Pagination.NextCursor == nil {
			break
		}
		cursor = *body.Meta.Pagination.NextCursor
	}
	slices.Reverse(got)
	r.events = append(r.events, got...)
	if len(got) > 0 {
		r.after, _, _ = strings.Cut(got[len(got)-1], " ")
	}
	r.polls.Add(1)
	return nil
}

// TestEventOrderAcrossReplicas: on PostgreSQL, writers commit side by side
// (no counter row held to commit), among them a transaction held open while
// the others commit many events, transactions rolled back and one writing
// several events; readers on a second replica poll GET /v1/events from
// random cursors meanwhile, and an SSE stream on it resumes from a random
// event. Each gets every committed event after its cursor exactly once, in
// one order that is the same for all; no rolled-back event ever shows.
func TestEventOrderAcrossReplicas(t *testing.T) {
	if !testutil.OnPostgres() {
		t.Skip("writers side by side and a second replica need PostgreSQL (TEST_DATABASE_URL); SQLite's writers are serial")
	}
	ctx := context.Background()
	// Readers poll without pause: no rate limit in the way.
	a := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 1<<30, 1<<30
	}))
	a.App.Start(ctx)
	b, err := app.New(ctx, a.App.Config, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	b.Start(ctx)
	srvB := httptest.NewServer(b.Handler)
	t.Cleanup(srvB.Close)

	// The writes are bounded: with an event order that makes writers wait
	// for the one before them to commit, they would wait for the long
	// transaction below, which waits for them.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	as := func(actor testutil.Actor) context.Context {
		v, err := a.App.Service.Authenticate(ctx, actor.Token)
		if err != nil {
			t.Fatal(err)
		}
		return viewer.NewContext(wctx, v)
	}
	alice, bob, admin := as(a.Alice), as(a.Bob), as(a.Admin)
	svc := a.App.Service
	create := func(ctx context.Context, name string) (*ent.Item, error) {
		return svc.CreateItem(ctx, ent.CreateItemInput{Name: name})
	}

	// Events before any reader, so that readers have points to resume from.
	for i := range 20 {
		if _, err := create(alice, fmt.Sprintf("seed-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	a.WaitPublished()

	// The readers start from random points of what is published, and poll
	// until told to stop.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 28))
	start := &feedReader{h: b.Handler, token: a.Admin.Token}
	if err := start.poll(); err != nil {
		t.Fatal(err)
	}
	const nReaders = 3
	readers := make([]*feedReader, nReaders)
	for i := range readers {
		r := &feedReader{h: b.Handler, token: a.Admin.Token}
		if k := rng.IntN(len(start.events) + 1); k > 0 {
			r.from, _, _ = strings.Cut(start.events[k-1], " ")
			r.after = r.from
		}
		readers[i] = r
	}
	sseFrom, _, _ := strings.Cut(start.events[rng.IntN(len(start.events))], " ")
	stream := openStream(t, srvB, a.Admin.Token, sseFrom, "")
	if stream.resp.StatusCode != http.StatusOK {
		t.Fatalf("stream on B: %d", stream.resp.StatusCode)
	}
	stopReading := make(chan struct{})
	readErrs := make(chan error, nReaders)
	var reading sync.WaitGroup
	for _, r := range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			for {
				if err := r.poll(); err != nil {
					readErrs <- err
					return
				}
				select {
				case <-stopReading:
					return
				default:
				}
			}
		}()
	}

	var (
		mu        sync.Mutex
		committed []string // "type:name" of every committed event
	)
	record := func(evs ...string) {
		mu.Lock()
		committed = append(committed, evs...)
		mu.Unlock()
	}
	writeErrs := make(chan error, 16)
	var writing sync.WaitGroup
	writer := func(f func() error) {
		writing.Add(1)
		go func() {
			defer writing.Done()
			if err := f(); err != nil {
				writeErrs <- err
			}
		}()
	}

	// The long transaction: its event comes before those of every
	// transaction that began after it, so the feeds hold those back until
	// it commits. It commits once the other writers are done and every
	// reader has polled twice since: had a reader gone past its place in
	// the order, its event would be missed.
	othersDone := make(chan struct{})
	long := make(chan error, 1)
	longBegun := make(chan struct{})
	go func() {
		long <- func() error {
			// An owner of its own: the owner's item counter stays
			// locked until it commits.
			tx, err := a.App.DB.Client.Tx(admin)
			if err != nil {
				return err
			}
			if _, err := tx.Item.Create().SetUserID(a.Admin.UserID).SetName("long").Save(admin); err != nil {
				_ = tx.Rollback()
				return err
			}
			close(longBegun)
			<-othersDone
			polled := make([]int64, len(readers))
			for i, r := range readers {
				polled[i] = r.polls.Load()
			}
			if !testutil.Eventually(t, 30*time.Second, func() bool {
				for i, r := range readers {
					if r.polls.Load() < polled[i]+2 {
						return false
					}
				}
				return true
			}) {
				_ = tx.Rollback()
				return fmt.Errorf("the readers stopped polling")
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			// No wake-up: the tailers find it because they saw events
			// held back (Options.Concurrent).
			record("item.created:long")
			return nil
		}()
	}()
	<-longBegun

	// Writers through the service, side by side: creates, and changes of
	// each created item (update, delete).
	for w := range 3 {
		writer(func() error {
			ctx := alice
			if w%2 == 1 {
				ctx = bob
			}
			for i := range 15 {
				name := fmt.Sprintf("w%d-%d", w, i)
				it, err := create(ctx, name)
				if err != nil {
					return err
				}
				record("item.created:" + name)
				if i%3 == 0 {
					renamed := name + "-renamed"
					if _, err := svc.UpdateItem(ctx, it.ID, ent.UpdateItemInput{Name: &renamed}); err != nil {
						return err
					}
					record("item.updated:" + renamed)
					if err := svc.DeleteItem(ctx, it.ID); err != nil {
						return err
					}
					record("item.deleted:" + renamed)
				}
			}
			return nil
		})
	}
	// Transactions that write several events, and transactions rolled
	// back after writing theirs.
	writer(func() error {
		for i := range 5 {
			tx, err := a.App.DB.Client.Tx(alice)
			if err != nil {
				return err
			}
			var names []string
			for j := range 3 {
				name := fmt.Sprintf("batch%d-%d", i, j)
				if _, err := tx.Item.Create().SetUserID(a.Alice.UserID).SetName(name).Save(alice); err != nil {
					_ = tx.Rollback()
					return err
				}
				names = append(names, "item.created:"+name)
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			record(names...)
			a.App.Events.Committed()
		}
		return nil
	})
	writer(func() error {
		for i := range 5 {
			tx, err := a.App.DB.Client.Tx(alice)
			if err != nil {
				return err
			}
			for j := range 2 {
				if _, err := tx.Item.Create().SetUserID(a.Alice.UserID).SetName(fmt.Sprintf("rolled-back%d-%d", i, j)).Save(alice); err != nil {
					_ = tx.Rollback()
					return err
				}
			}
			if err := tx.Rollback(); err != nil {
				return err
			}
		}
		return nil
	})
	writing.Wait()
	close(othersDone)
	if err := <-long; err != nil {
		select {
		case rerr := <-readErrs:
			t.Fatalf("long transaction: %v; reader: %v", err, rerr)
		default:
		}
		t.Fatalf("long transaction: %v", err)
	}
	close(writeErrs)
	for err := range writeErrs {
		t.Fatalf("writer: %v", err)
	}

	// Everything committed is published once the last writer is done; one
	// more poll each then finds the rest.
	a.WaitPublished()
	close(stopReading)
	reading.Wait()
	close(readErrs)
	for err := range readErrs {
		t.Fatalf("reader: %v", err)
	}
	for _, r := range readers {
		if err := r.poll(); err != nil {
			t.Fatal(err)
		}
	}

	// The order: the whole feed, read on replica A.
	all := &feedReader{h: a.App.Handler, token: a.Admin.Token}
	if err := all.poll(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range all.events {
		_, name, _ := strings.Cut(e, " ")
		if !strings.Contains(name, ":seed-") {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	slices.Sort(committed)
	if g, w := strings.Join(got, ","), strings.Join(committed, ","); g != w {
		t.Fatalf("the feed's events are not the committed ones exactly once:\nfeed      %s\ncommitted %s", g, w)
	}
	suffix := func(after string) []string {
		if after == "" {
			return all.events
		}
		for i, e := range all.events {
			if strings.HasPrefix(e, after+" ") {
				return all.events[i+1:]
			}
		}
		t.Fatalf("cursor %s is not in the feed", after)
		return nil
	}
	for i, r := range readers {
		want := suffix(r.from)
		if g, w := strings.Join(r.events, "\n"), strings.Join(want, "\n"); g != w {
			t.Fatalf("reader %d got %d events, want the %d after its cursor in the feed's order:\ngot\n%s\nwant\n%s", i, len(r.events), len(want), g, w)
		}
	}

	// The stream on B resumed from a random event and got the rest, in
	// the same order.
	want := suffix(sseFrom)
	for i, w := range want {
		select {
		case ev, ok := <-stream.events:
			if !ok {
				t.Fatalf("stream ended after %d of %d events", i, len(want))
			}
			if g := ev.ID + " " + ev.name(t); g != w {
				t.Fatalf("stream event %d = %s, want %s", i, g, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stream: %d of %d events within 10s", i, len(want))
		}
	}
}
