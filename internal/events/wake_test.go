package events_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestRelays: each relay between replicas, on its real service: a listener
// wakes its hub once connected (for what was committed while it was not),
// then at every wake-up another replica publishes, and stops when its
// context ends; a relay that cannot reach its service says so.
func TestRelays(t *testing.T) {
	cases := []struct {
		name string
		// relays returns two relays on the same service, as two replicas
		// hold, and one whose service is unreachable.
		relays func(t *testing.T) (a, b, down events.Relay)
	}{
		{"postgres listen/notify", func(t *testing.T) (events.Relay, events.Relay, events.Relay) {
			if !testutil.OnPostgres() {
				t.Skip("needs TEST_DATABASE_URL")
			}
			env := testutil.New(t)
			_, dsn, err := config.ParseDatabaseURL(env.App.Config.DatabaseURL)
			if err != nil {
				t.Fatal(err)
			}
			relay := events.PostgresRelay{DB: env.App.DB.SQL, DSN: dsn}
			unreachable := "postgres://postgres@" + closedAddr(t) + "/x?connect_timeout=5"
			db, err := sql.Open("pgx", unreachable)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return relay, relay, events.PostgresRelay{DB: db, DSN: unreachable}
		}},
		{"redis pub/sub", func(t *testing.T) (events.Relay, events.Relay, events.Relay) {
			opt, err := redis.ParseURL(testutil.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			client := func(opt *redis.Options) *redis.Client {
				c := redis.NewClient(opt)
				t.Cleanup(func() { c.Close() })
				return c
			}
			// A channel of its own: other tests publish on the default.
			channel := "itemsvc_test_" + ulid.Make().String()
			downOpt := *opt
			downOpt.Addr = closedAddr(t)
			downOpt.MaxRetries = -1
			return events.RedisRelay{Client: client(opt), Channel: channel},
				events.RedisRelay{Client: client(opt), Channel: channel},
				events.RedisRelay{Client: client(&downOpt), Channel: channel}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b, down := c.relays(t)
			wakes := make(chan struct{}, 100)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			listened := make(chan error, 1)
			go func() { listened <- a.Listen(ctx, func() { wakes <- struct{}{} }) }()

			awake := func(what string) {
				t.Helper()
				select {
				case <-wakes:
				case err := <-listened:
					t.Fatalf("%s: Listen returned %v", what, err)
				case <-time.After(wait):
					t.Fatalf("%s: no wake-up", what)
				}
			}
			awake("once connected")
			for i := range 3 {
				if err := b.Publish(context.Background()); err != nil {
					t.Fatalf("publish %d: %v", i, err)
				}
				awake("after a publish")
			}
			cancel()
			select {
			case <-listened:
			case <-time.After(wait):
				t.Fatal("Listen did not return once its context ended")
			}

			dctx, dcancel := context.WithTimeout(context.Background(), wait)
			defer dcancel()
			if err := down.Listen(dctx, func() { t.Error("an unreachable relay woke its hub") }); err == nil || dctx.Err() != nil {
				t.Errorf("Listen on an unreachable service: %v, want its error at once", err)
			}
			if err := down.Publish(dctx); err == nil {
				t.Error("Publish on an unreachable service succeeded")
			}
		})
	}
}

// relayStub is a Relay whose traffic the test controls: Listen records the
// hub's wake function and fails while fail holds errors; Publish counts, and
// waits for release when it is set.
type relayStub struct {
	mu        sync.Mutex
	wake      func()
	fail      []error
	listens   chan struct{} // a Listen began
	published chan struct{} // a Publish began
	release   chan struct{}
}

func newRelayStub(fail ...error) *relayStub {
	return &relayStub{fail: fail, listens: make(chan struct{}, 10), published: make(chan struct{}, 100)}
}

func (r *relayStub) Listen(ctx context.Context, wake func()) error {
	r.mu.Lock()
	var err error
	if len(r.fail) > 0 {
		err, r.fail = r.fail[0], r.fail[1:]
	} else {
		r.wake = wake
	}
	r.mu.Unlock()
	r.listens <- struct{}{}
	if err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

func (r *relayStub) Publish(ctx context.Context) error {
	r.published <- struct{}{}
	if r.release != nil {
		select {
		case <-r.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// receive waits for one signal on c.
func receive(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(wait):
		t.Fatalf("no %s", what)
	}
}

// TestHubRelay: how a hub uses its relay: a wake-up from another replica
// makes it read the outbox, Committed publishes one for the others (those
// that come while one is being sent fold into the next), and a listener
// that fails is started again.
func TestHubRelay(t *testing.T) {
	t.Run("a wake-up from the relay reads the outbox", func(t *testing.T) {
		relay := newRelayStub()
		// On SQLite nothing else wakes this hub (its poll is an hour
		// away); on PostgreSQL it also looks every second (newFeed).
		f := newFeed(t, events.Options{FlushInterval: -1, Relay: relay})
		receive(t, relay.listens, "listener")
		s := f.subscribe(as(f.env.Alice, viewer.RoleUser), events.Filter{})
		f.env.CreateItem(f.env.Alice, "from another replica") // its own server's hub is not this one
		relay.mu.Lock()
		wake := relay.wake
		relay.mu.Unlock()
		wake()
		if got := itemName(next(t, s)); got != "from another replica" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("Committed publishes, folding those sent meanwhile", func(t *testing.T) {
		relay := newRelayStub()
		relay.release = make(chan struct{})
		f := newFeed(t, events.Options{Relay: relay})
		f.hub.Committed()
		receive(t, relay.published, "publish")
		for range 5 { // while the first is being sent
			f.hub.Committed()
		}
		relay.release <- struct{}{}
		receive(t, relay.published, "second publish")
		relay.release <- struct{}{}
		f.stop()
		<-f.done
		if n := len(relay.published); n != 0 {
			t.Fatalf("%d more publishes, want the five folded into the second", n)
		}
	})
	t.Run("a failed listener is started again", func(t *testing.T) {
		relay := newRelayStub(errors.New("connection lost"))
		newFeed(t, events.Options{Relay: relay})
		receive(t, relay.listens, "listener")
		receive(t, relay.listens, "listener started again")
	})
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
