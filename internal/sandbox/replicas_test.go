package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/sandbox"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestReplicasResetOnce: replicas sharing a database whose workers tick
// together reset it once, not once each.
func TestReplicasResetOnce(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.Sandbox = true }))
	ctx := context.Background()
	sbs := make([]*sandbox.Sandbox, 3)
	for i := range sbs {
		sbs[i] = sandbox.New(env.App.DB.Client, env.App.Logger, time.Hour, env.App.Keys.Derive(secrets.PurposeSandbox))
	}
	if _, err := sbs[0].Start(ctx); err != nil {
		t.Fatal(err)
	}
	tick := func() int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		resets := 0
		for _, sb := range sbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				done, err := sb.ResetIfDue(ctx)
				if err != nil {
					t.Errorf("reset: %v", err)
				}
				if done {
					mu.Lock()
					resets++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return resets
	}
	if n := tick(); n != 0 {
		t.Errorf("tick right after the start's reset: %d resets, want 0", n)
	}
	// Make the last reset an interval old, as time would.
	err := env.App.DB.Client.Setting.UpdateOneID("sandbox_reset_at").
		SetValue(time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000000Z")).
		Exec(systemCtx(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if n := tick(); n != 1 {
		t.Errorf("tick when due: %d resets, want exactly 1", n)
	}
}
