package rest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStreamsShutdown: the streams whose connections the server took over
// are what Streams.Shutdown waits for. When the hub ends them, each gets its
// "error" event and a complete response (the last chunk), and Shutdown
// returns; when its deadline comes first, it closes the connections still
// open, and their streams end.
func TestStreamsShutdown(t *testing.T) {
	t.Run("streams end in time", func(t *testing.T) {
		env, srv := streamEnv(t)
		s := openStream(t, srv, env.Alice.Token, "", "")
		if !s.resp.Close {
			t.Error("the response does not say Connection: close, but its connection closes when the stream ends")
		}
		waitSubscribers(t, env, 1)
		env.App.Close() // the hub ends every stream, as when the server stops
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := env.App.Streams.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if ev := s.next(t); ev.Event != "error" || !strings.Contains(ev.Data, `"UNAVAILABLE"`) {
			t.Fatalf("got %+v", ev)
		}
		<-s.done
		if s.err != nil {
			t.Fatalf("the response did not end with its last chunk: %v", s.err)
		}
	})
	t.Run("deadline closes the rest", func(t *testing.T) {
		env, srv := streamEnv(t)
		s := openStream(t, srv, env.Alice.Token, "", "")
		select { // the first frame follows the connection's take-over
		case <-s.opened:
		case <-time.After(10 * time.Second):
			t.Fatal("no first frame")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := env.App.Streams.Shutdown(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown = %v, want the deadline's error", err)
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the connection stayed open")
		}
		waitSubscribers(t, env, 0)
	})
}
