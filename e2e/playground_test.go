package e2e_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestPagesInBrowser runs the server on a free port with seeded items and
// has chromium, cut off from everything but that server, use its pages:
// sign in on the playground with the admin's API key, run a query, see
// every user's items, browse, filter, edit and delete them in the browsing
// view and watch items created through REST appear live, see only Alice's
// with her key, sign out; then read the API docs. It runs with E2E=1
// (make e2e, CI), where a missing chromium or node_modules fails it;
// otherwise it is skipped.
func TestPagesInBrowser(t *testing.T) {
	requireE2E(t, chromium(), "node_modules/playwright-core")

	env := testutil.New(t)
	// Older than the named items: enough for the browsing view's second page.
	for i := 1; i <= 20; i++ {
		env.CreateItem(env.Bob, fmt.Sprintf("Bob's old item %d", i))
	}
	names := []string{"Alice's lamp", "Alice's desk", "Bob's chair"}
	env.CreateItem(env.Alice, names[0])
	env.CreateItem(env.Alice, names[1])
	env.CreateItem(env.Bob, names[2])
	// A correctly signed token whose hour is over, to show how the
	// playground asks to sign in again.
	expired, err := auth.NewTokens(env.App.SigningKey, time.Minute).
		WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) }).
		Issue(env.Admin.UserID, env.Admin.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	env.App.Start(context.Background()) // the event feed, for the live tab
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	shots := []string{"playground-signed-in.png", "playground-live.png", "playground-explorer.png",
		"playground-browse-edit.png", "playground-browse-conflict.png", "playground-browse.png", "playground-browse-live.png", "playground-browse-user.png", "docs.png"}
	runBrowserTest(t, "playground.test.mjs", shots,
		"BASE_URL="+srv.URL,
		"API_KEY="+env.Admin.Key,
		"USER_API_KEY="+env.Alice.Key,
		"EXPIRED_TOKEN="+expired,
		"EXPECT="+strings.Join(names, ","),
	)
}
