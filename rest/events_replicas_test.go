package rest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestEventStreamAcrossReplicas: a change committed on replica A reaches a
// stream open on replica B, woken by PostgreSQL LISTEN/NOTIFY or by Redis
// pub/sub, not by the poll (an hour here).
func TestEventStreamAcrossReplicas(t *testing.T) {
	cases := []struct {
		name  string
		redis func(t *testing.T) string
	}{
		{"postgres listen/notify", func(*testing.T) string { return "" }},
		{"redis pub/sub", func(t *testing.T) string { return testutil.RedisURL(t) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !testutil.OnPostgres() {
				t.Skip("replicas share a PostgreSQL database (TEST_DATABASE_URL)")
			}
			redisURL := c.redis(t)
			slowPoll := func(o *app.Options) { o.EventPoll = time.Hour }
			a := testutil.New(t, testutil.WithAppOptions(slowPoll), testutil.WithConfig(func(cfg *config.Config) { cfg.RedisURL = redisURL }))
			a.App.Start(context.Background())

			var bopts app.Options
			slowPoll(&bopts)
			b, err := app.New(context.Background(), a.App.Config, slog.New(slog.NewTextHandler(io.Discard, nil)), bopts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			b.Start(context.Background())
			srvB := httptest.NewServer(b.Handler)
			t.Cleanup(srvB.Close)

			s := openStream(t, srvB, a.Alice.Token, "", "")
			if s.resp.StatusCode != 200 {
				t.Fatalf("stream on B: %d", s.resp.StatusCode)
			}
			// B's tailer has read the outbox once it listens; a change
			// on A must now arrive through the wake-up alone.
			a.CreateItem(a.Alice, "from A")
			if ev := s.next(t); ev.name(t) != "item.created:from A" {
				t.Fatalf("got %s", ev.name(t))
			}
		})
	}
}
