package e2e_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestRealtimeClients runs the server with its event tailer and has real
// clients follow the event streams (realtime.test.mjs): the graphql-ws npm
// client over a WebSocket and chromium's EventSource over SSE. It runs with
// E2E=1 (make e2e, CI), where a missing chromium or node_modules fails it.
func TestRealtimeClients(t *testing.T) {
	requireE2E(t, chromium(), "node_modules/playwright-core", "node_modules/graphql-ws")
	env := testutil.New(t)
	env.App.Start(context.Background())
	// The event both clients start after.
	env.CreateItem(env.Alice, "before the test")
	evs, err := env.App.Service.ListEvents(adminContext(t, env), eventsPage())
	if err != nil || len(evs.Events) == 0 {
		t.Fatalf("events: %v", err)
	}
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "realtime.test.mjs")
	cmd.Env = append(os.Environ(),
		"BASE_URL="+srv.URL,
		"ALICE_TOKEN="+env.Alice.Token,
		"BOB_TOKEN="+env.Bob.Token,
		"AFTER="+evs.Events[0].ID,
		"CHROMIUM="+chromium(),
	)
	output, err := cmd.CombinedOutput()
	t.Logf("node realtime.test.mjs:\n%s", output)
	if err != nil {
		t.Fatalf("realtime clients failed: %v", err)
	}
}

// adminContext is a request context of the admin.
func adminContext(t *testing.T, env *testutil.Env) context.Context {
	t.Helper()
	v, err := env.App.Service.Authenticate(context.Background(), env.Admin.Token)
	if err != nil {
		t.Fatal(err)
	}
	return viewer.NewContext(context.Background(), v)
}

// eventsPage asks for the newest event.
func eventsPage() service.EventListParams { return service.EventListParams{Limit: 1} }
