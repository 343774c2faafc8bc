package e2e_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestPagesInBrowserItems has chromium use the items page and the event
// history (items.test.mjs), both built from the schema the page reads by
// introspection: the create form's fields are CreateItemInput's, as an
// introspection query run by the test reads them, and the sortable
// columns ItemOrderField's; the admin sorts the items by name both ways
// (the rows as the API orders them), filters them with a row of
// ItemWhereInput's predicates, creates an item (a blank name refused
// beside its field), opens its detail view and edits it there, then
// browses the event history: filtered by type and since an event, paged,
// and tailed live while an item is created through REST; a tab whose
// introspection answer gains fields of every kind builds them into the
// form, each as its type says. Its name starts
// as TestPagesInBrowser's, so that the runs of that test (make e2e)
// include it.
func TestPagesInBrowserItems(t *testing.T) {
	requireE2E(t, chromium(), "node_modules/playwright-core")

	env := testutil.New(t)
	// More than a page of events, and names that sort apart from the
	// order they were made in.
	for i := 1; i <= 12; i++ {
		env.CreateItem(env.Alice, fmt.Sprintf("Alice's item %c", 'a'+(i*7)%12))
		env.CreateItem(env.Bob, fmt.Sprintf("Bob's item %02d", 13-i))
	}
	env.App.Start(context.Background()) // the event feed, for the live tail
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	shots := []string{"items-sorted.png", "items-created.png", "items-detail.png", "events.png", "events-live.png"}
	runBrowserTest(t, "items.test.mjs", shots,
		"BASE_URL="+srv.URL,
		"API_KEY="+env.Admin.Key,
	)
}
