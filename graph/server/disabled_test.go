package server_test

import (
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestStreamsEndForDisabledUsers: disabling a user ends their open
// subscriptions within the key recheck, over graphql-ws (then closed 4403)
// and SSE, as a revocation does, and their next request is UNAUTHORIZED.
func TestStreamsEndForDisabledUsers(t *testing.T) {
	const keyRecheck = time.Second
	env, srv := newSocketEnv(t, testutil.WithAppOptions(func(o *app.Options) {
		o.Service.KeyRecheck = keyRecheck
	}))
	disable := func(t *testing.T, userID string, disabled bool) time.Time {
		t.Helper()
		if err := env.App.DB.Client.User.UpdateOneID(userID).SetDisabled(disabled).Exec(testutil.SystemContext(t)); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	// bound: KeyRecheck, and slack for a loaded machine.
	const bound = keyRecheck + 500*time.Millisecond

	t.Run("graphql-ws", func(t *testing.T) {
		as := env.NewActor("carol@example.com", "Carol", false)
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		c := dialWS(t, srv)
		c.init(as.Token)
		c.subscribe("s", `subscription { itemEvents { id } }`)
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		at := disable(t, as.UserID, true)
		t.Cleanup(func() { disable(t, as.UserID, false) })
		if _, code := c.result("s"); code != "UNAUTHORIZED" {
			t.Fatalf("code %q, want UNAUTHORIZED", code)
		}
		if took := time.Since(at); took > bound {
			t.Fatalf("the stream ended %v after the user was disabled, want within %v", took, bound)
		}
		if code := c.closeCode(); code != 4403 {
			t.Fatalf("close code %d, want 4403", code)
		}
		if r := testutil.GQL(t, env, as.Token, `{ me { id } }`, nil); r.Code() != "UNAUTHORIZED" {
			t.Fatalf("next request: %s, want UNAUTHORIZED", r.Raw)
		}
	})
	t.Run("sse", func(t *testing.T) {
		as := env.NewActor("dave@example.com", "Dave", false)
		waitSubscribers(t, env, func(n int) bool { return n == 0 })
		s, _ := subscribeSSE(t, srv, as.Token, nil)
		waitSubscribers(t, env, func(n int) bool { return n == 1 })
		at := disable(t, as.UserID, true)
		if e := s.next(t); e.Code != "UNAUTHORIZED" {
			t.Fatalf("got %+v, want UNAUTHORIZED", e)
		}
		if took := time.Since(at); took > bound {
			t.Fatalf("the stream ended %v after the user was disabled, want within %v", took, bound)
		}
	})
}
