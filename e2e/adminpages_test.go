package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestPagesInBrowserAdmin has chromium use the playground's admin pages
// (admin.test.mjs): an admin creates a user, issues a key for them and
// copies it; a second browser signs in with that key and follows the live
// browsing view; the admin revokes the key and both that browser's next
// request and its open stream fail visibly; the admin registers a webhook
// at a receiver run here (it answers 500, then 200), sees the failed
// delivery, retries it, and finds every one of those actions in the audit
// trail. A key whose limit the admin lowered sees RATE_LIMITED beside the
// button it pressed. Its name starts as TestPagesInBrowser's, so that the
// runs of that test (make e2e) include it.
func TestPagesInBrowserAdmin(t *testing.T) {
	requireE2E(t, chromium(), "node_modules/playwright-core")

	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.WebhookAllowPrivate = true // the receiver is on loopback
		// One failed attempt waits an hour: the retry the admin asks for
		// is the one that succeeds.
		c.WebhookRetrySchedule = []time.Duration{time.Hour}
	}))
	// More than a page of Alice's items: Next has a page to ask for. They
	// are made with another key of hers, so that the key the browser uses
	// has spent nothing of its window when the admin lowers its limit.
	seeder := env.NewActor("alice@example.com", "Alice", false)
	for i := 1; i <= 21; i++ {
		env.CreateItem(seeder, fmt.Sprintf("Alice's item %d", i))
	}
	var hits atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(receiver.Close)
	env.App.Start(context.Background()) // the event feed and the webhook dispatcher
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	shots := []string{"admin-users.png", "admin-keys-created.png", "admin-keys-revoked.png", "admin-revoked-stream.png", "admin-revoked-session.png",
		"admin-webhooks.png", "admin-rate-limited.png", "admin-user-keys.png", "admin-audit.png"}
	runBrowserTest(t, "admin.test.mjs", shots,
		"BASE_URL="+srv.URL,
		"API_KEY="+env.Admin.Key,
		"USER_API_KEY="+env.Alice.Key,
		"RECEIVER_URL="+receiver.URL+"/hook",
	)
	if n := hits.Load(); n < 2 {
		t.Errorf("the receiver was called %d times, want the failed attempt and the retry", n)
	}
}
