package graph_test

import (
	"strings"
	"testing"

	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestWebhookParity sends every webhook, delivery and events request to
// REST and its twin to GraphQL, as the owner, another user and an admin,
// and compares what comes back (parityCase.run): the same code and field,
// and the same data, field for field. GraphQL's selections are every field
// REST renders (selection), so a field added to one API alone fails here.
func TestWebhookParity(t *testing.T) {
	env := newParityEnv(t)
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	alice, bob, admin := env.Alice, env.Bob, env.Admin

	aliceHook, _ := env.failing(alice, "alice")
	env.hook(alice, "alice-second", true)
	bobHook, bobFailed := env.failing(bob, "bob")
	pausedHook, pausedFailed := env.failing(alice, "paused")
	if _, err := env.App.Service.UpdateWebhook(env.as(alice), pausedHook, service.WebhookInput{Active: new(bool)}); err != nil {
		t.Fatal(err)
	}
	env.hook(admin, "admin", true)
	bobEvent := env.eventOf(bob)
	aliceEvent := env.eventOf(alice)
	gone := env.CreateItem(alice, "gone") // and its item.deleted event
	if r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + gone, Token: alice.Token}); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	env.WaitPublished()

	const (
		unknownHook     = "whk_01jd0000000000000000000000"
		unknownDelivery = "dlv_01jd0000000000000000000000"
		unknownEvent    = "evt_01jd0000000000000000000000"
	)
	expired := "evt_" + strings.Repeat("0", 26) // of 1970: older than any retention
	fixed := func(ids map[string]string) func() map[string]string {
		return func() map[string]string { return ids }
	}
	fresh := func(a testutil.Actor) func() map[string]string {
		return func() map[string]string { return map[string]string{"id": env.hook(a, "fresh", true)} }
	}
	freshFailing := func(a testutil.Actor) func() map[string]string {
		return func() map[string]string {
			w, d := env.failing(a, "fresh")
			return map[string]string{"webhookID": w, "id": d}
		}
	}
	// secondPage reads the first page of a list on each API, as as, and
	// names where the second starts: REST's next_cursor as {cursor} (the
	// events page; webhooks and deliveries page by number) and GraphQL's
	// endCursor as $after.
	secondPage := func(as testutil.Actor, restPath, query string, keys ...any) func() map[string]string {
		return func() map[string]string {
			var first struct {
				Meta struct {
					Pagination struct {
						NextCursor string `json:"next_cursor"`
					} `json:"pagination"`
				} `json:"meta"`
			}
			testutil.MustJSON(t, env.Do(testutil.Request{Method: "GET", Path: restPath, Token: as.Token}).Body, &first)
			var vars map[string]any
			if strings.Contains(query, "$webhookID") {
				vars = map[string]any{"webhookID": aliceHook}
			}
			r := testutil.GQL(t, env.Env, as.Token, query, vars).OK(t)
			end, _ := r.At(t, append(keys, "pageInfo", "endCursor")...).(string)
			return map[string]string{"cursor": first.Meta.Pagination.NextCursor, "after": end, "webhookID": aliceHook}
		}
	}

	const url = "https://hooks.example.com/new"
	cases := []parityCase{
		// Query.webhooks: GET /v1/webhooks
		{name: "webhooks: a user's own", as: alice, method: "GET", path: "/v1/webhooks?limit=50",
			query: `{ webhooks(first: 50) { totalCount pageInfo { hasNextPage } edges { node { ...W } } } }`, at: "webhooks", status: 200},
		{name: "webhooks: another user's own", as: bob, method: "GET", path: "/v1/webhooks?limit=50",
			query: `{ webhooks(first: 50) { totalCount pageInfo { hasNextPage } edges { node { ...W } } } }`, at: "webhooks", status: 200},
		{name: "webhooks: an admin's, everyone's", as: admin, method: "GET", path: "/v1/webhooks?limit=50",
			query: `{ webhooks(first: 50) { totalCount pageInfo { hasNextPage } edges { node { ...W } } } }`, at: "webhooks", status: 200},
		{name: "webhooks: the second page", as: alice, method: "GET", path: "/v1/webhooks?limit=1&page=2",
			ids:   secondPage(alice, "/v1/webhooks?limit=1", `{ webhooks(first: 1) { pageInfo { endCursor } } }`, "webhooks"),
			query: `query($after: Cursor) { webhooks(first: 1, after: $after) { totalCount pageInfo { hasNextPage } edges { node { ...W } } } }`, at: "webhooks", status: 200},
		{name: "webhooks: a page past the end holds none", as: alice, method: "GET", path: "/v1/webhooks?limit=1&page=1000",
			ids:   secondPage(alice, "/v1/webhooks?limit=50", `{ webhooks(first: 50) { pageInfo { endCursor } } }`, "webhooks"),
			query: `query($after: Cursor) { webhooks(first: 1, after: $after) { totalCount pageInfo { hasNextPage } edges { node { ...W } } } }`, at: "webhooks", status: 200},
		{name: "webhooks: a page too large", as: alice, method: "GET", path: "/v1/webhooks?limit=101",
			query: `{ webhooks(first: 101) { totalCount } }`, status: 400, code: "VALIDATION_ERROR", field: "limit", gqlField: "first"},

		// Query.webhook: GET /v1/webhooks/{id}
		{name: "webhook: own", as: alice, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}",
			query: `query($id: ID!) { webhook(id: $id) { ...W } }`, at: "webhook", status: 200},
		{name: "webhook: another user's", as: alice, ids: fixed(map[string]string{"id": bobHook}), method: "GET", path: "/v1/webhooks/{id}",
			query: `query($id: ID!) { webhook(id: $id) { ...W } }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "webhook: an admin reads anyone's", as: admin, ids: fixed(map[string]string{"id": bobHook}), method: "GET", path: "/v1/webhooks/{id}",
			query: `query($id: ID!) { webhook(id: $id) { ...W } }`, at: "webhook", status: 200},
		{name: "webhook: unknown", as: alice, ids: fixed(map[string]string{"id": unknownHook}), method: "GET", path: "/v1/webhooks/{id}",
			query: `query($id: ID!) { webhook(id: $id) { ...W } }`, status: 404, code: "NOT_FOUND"},
		{name: "webhook: an item's id", as: alice, ids: fixed(map[string]string{"id": "item_x"}), method: "GET", path: "/v1/webhooks/{id}",
			query: `query($id: ID!) { webhook(id: $id) { ...W } }`, status: 404, code: "NOT_FOUND"},

		// Webhook.deliveries: GET /v1/webhooks/{id}/deliveries
		{name: "deliveries: own", as: alice, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}/deliveries?limit=5",
			query: `query($id: ID!) { webhook(id: $id) { deliveries(first: 5) { totalCount pageInfo { hasNextPage } edges { node { ...D } } } } }`, at: "webhook.deliveries", status: 200},
		{name: "deliveries: failed only", as: alice, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}/deliveries?state=failed&limit=5",
			query: `query($id: ID!) { webhook(id: $id) { deliveries(state: FAILED, first: 5) { totalCount pageInfo { hasNextPage } edges { node { ...D } } } } }`, at: "webhook.deliveries", status: 200},
		{name: "deliveries: the second page", as: alice, method: "GET", path: "/v1/webhooks/{webhookID}/deliveries?limit=1&page=2",
			ids: secondPage(alice, "/v1/webhooks/"+aliceHook+"/deliveries?limit=1",
				`query($webhookID: ID!) { webhook(id: $webhookID) { deliveries(first: 1) { pageInfo { endCursor } } } }`, "webhook", "deliveries"),
			query: `query($webhookID: ID!, $after: Cursor) { webhook(id: $webhookID) { deliveries(first: 1, after: $after) { totalCount pageInfo { hasNextPage } edges { node { ...D } } } } }`,
			at:    "webhook.deliveries", status: 200},
		{name: "deliveries: another user's webhook", as: bob, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}/deliveries",
			query: `query($id: ID!) { webhook(id: $id) { deliveries { totalCount } } }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "deliveries: an admin reads anyone's", as: admin, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}/deliveries?limit=5",
			query: `query($id: ID!) { webhook(id: $id) { deliveries(first: 5) { totalCount pageInfo { hasNextPage } edges { node { ...D } } } } }`, at: "webhook.deliveries", status: 200},
		{name: "deliveries: an unknown state", as: alice, ids: fixed(map[string]string{"id": aliceHook}), method: "GET", path: "/v1/webhooks/{id}/deliveries?state=lost",
			query: `query($id: ID!) { webhook(id: $id) { deliveries(state: LOST) { totalCount } } }`, status: 400, code: "VALIDATION_ERROR", field: "state"},

		// createWebhook: POST /v1/webhooks
		{name: "createWebhook: own", as: alice, changes: true, method: "POST", path: "/v1/webhooks",
			body:  map[string]any{"url": url, "description": "CRM", "events": []string{"item.deleted", "item.created", "item.created"}},
			query: `mutation { createWebhook(input: {url: "` + url + `", description: "CRM", events: [DELETED, CREATED, CREATED]}) { ...W } }`,
			at:    "createWebhook", status: 201},
		{name: "createWebhook: an admin's, paused", as: admin, changes: true, method: "POST", path: "/v1/webhooks",
			body:  map[string]any{"url": url, "active": false, "events": []string{}},
			query: `mutation { createWebhook(input: {url: "` + url + `", active: false, events: []}) { ...W } }`,
			at:    "createWebhook", status: 201},
		{name: "createWebhook: no url", as: alice, method: "POST", path: "/v1/webhooks", body: map[string]any{"description": "x"},
			query: `mutation { createWebhook(input: {description: "x"}) { id } }`, status: 400, code: "VALIDATION_ERROR", field: "url"},
		{name: "createWebhook: a private address", as: alice, method: "POST", path: "/v1/webhooks", body: map[string]any{"url": "https://intranet.example.com/"},
			query: `mutation { createWebhook(input: {url: "https://intranet.example.com/"}) { id } }`, status: 400, code: "VALIDATION_ERROR", field: "url"},
		{name: "createWebhook: an unknown event", as: alice, method: "POST", path: "/v1/webhooks", body: map[string]any{"url": url, "events": []string{"item.moved"}},
			query: `mutation { createWebhook(input: {url: "` + url + `", events: [MOVED]}) { id } }`, status: 400, code: "VALIDATION_ERROR", field: "events"},
		{name: "createWebhook: a description too long", as: alice, method: "POST", path: "/v1/webhooks", body: map[string]any{"url": url, "description": strings.Repeat("d", 501)},
			query: `mutation($d: String) { createWebhook(input: {url: "` + url + `", description: $d}) { id } }`, vars: map[string]any{"d": strings.Repeat("d", 501)},
			status: 400, code: "VALIDATION_ERROR", field: "description"},
		{name: "createWebhook: no token", method: "POST", path: "/v1/webhooks", body: map[string]any{"url": url},
			query: `mutation { createWebhook(input: {url: "` + url + `"}) { id } }`, status: 401, code: "UNAUTHORIZED"},

		// updateWebhook: PUT /v1/webhooks/{id}
		{name: "updateWebhook: own", as: alice, ids: fresh(alice), changes: true, method: "PUT", path: "/v1/webhooks/{id}",
			body:  map[string]any{"active": false, "events": []string{"item.updated"}, "description": "paused"},
			query: `mutation($id: ID!) { updateWebhook(id: $id, input: {active: false, events: [UPDATED], description: "paused"}) { ...W } }`,
			at:    "updateWebhook", status: 200},
		{name: "updateWebhook: another user's", as: alice, ids: fixed(map[string]string{"id": bobHook}), method: "PUT", path: "/v1/webhooks/{id}",
			body: map[string]any{"active": false}, query: `mutation($id: ID!) { updateWebhook(id: $id, input: {active: false}) { id } }`,
			status: 403, code: "PERMISSION_DENIED"},
		{name: "updateWebhook: an admin changes anyone's", as: admin, ids: fresh(bob), changes: true, method: "PUT", path: "/v1/webhooks/{id}",
			body:  map[string]any{"url": "https://hooks.example.com/moved"},
			query: `mutation($id: ID!) { updateWebhook(id: $id, input: {url: "https://hooks.example.com/moved"}) { ...W } }`,
			at:    "updateWebhook", status: 200},
		{name: "updateWebhook: unknown", as: alice, ids: fixed(map[string]string{"id": unknownHook}), method: "PUT", path: "/v1/webhooks/{id}",
			body: map[string]any{"active": false}, query: `mutation($id: ID!) { updateWebhook(id: $id, input: {active: false}) { id } }`,
			status: 404, code: "NOT_FOUND"},
		{name: "updateWebhook: a private address", as: alice, ids: fixed(map[string]string{"id": aliceHook}), method: "PUT", path: "/v1/webhooks/{id}",
			body: map[string]any{"url": "http://10.0.0.1/"}, query: `mutation($id: ID!) { updateWebhook(id: $id, input: {url: "http://10.0.0.1/"}) { id } }`,
			status: 400, code: "VALIDATION_ERROR", field: "url"},

		// rotateWebhookSecret: POST /v1/webhooks/{id}/rotate-secret
		{name: "rotateWebhookSecret: own", as: alice, ids: fresh(alice), changes: true, method: "POST", path: "/v1/webhooks/{id}/rotate-secret",
			query: `mutation($id: ID!) { rotateWebhookSecret(id: $id) { ...W } }`, at: "rotateWebhookSecret", status: 200},
		{name: "rotateWebhookSecret: another user's", as: alice, ids: fixed(map[string]string{"id": bobHook}), method: "POST", path: "/v1/webhooks/{id}/rotate-secret",
			query: `mutation($id: ID!) { rotateWebhookSecret(id: $id) { id } }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "rotateWebhookSecret: an admin rotates anyone's", as: admin, ids: fresh(bob), changes: true, method: "POST", path: "/v1/webhooks/{id}/rotate-secret",
			query: `mutation($id: ID!) { rotateWebhookSecret(id: $id) { ...W } }`, at: "rotateWebhookSecret", status: 200},
		{name: "rotateWebhookSecret: unknown", as: alice, ids: fixed(map[string]string{"id": unknownHook}), method: "POST", path: "/v1/webhooks/{id}/rotate-secret",
			query: `mutation($id: ID!) { rotateWebhookSecret(id: $id) { id } }`, status: 404, code: "NOT_FOUND"},

		// retryDelivery: POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry
		{name: "retryDelivery: own", as: alice, ids: freshFailing(alice), changes: true, method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { ...D } }`, at: "retryDelivery", status: 200},
		{name: "retryDelivery: another user's", as: alice, ids: fixed(map[string]string{"webhookID": bobHook, "id": bobFailed}), method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { id } }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "retryDelivery: an admin retries anyone's", as: admin, ids: freshFailing(bob), changes: true, method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { ...D } }`, at: "retryDelivery", status: 200},
		{name: "retryDelivery: unknown delivery", as: alice, ids: fixed(map[string]string{"webhookID": aliceHook, "id": unknownDelivery}), method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { id } }`, status: 404, code: "NOT_FOUND"},
		{name: "retryDelivery: another webhook's delivery", as: alice, ids: fixed(map[string]string{"webhookID": aliceHook, "id": pausedFailed}), method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { id } }`, status: 404, code: "NOT_FOUND"},
		{name: "retryDelivery: a paused webhook", as: alice, ids: fixed(map[string]string{"webhookID": pausedHook, "id": pausedFailed}), method: "POST", path: "/v1/webhooks/{webhookID}/deliveries/{id}/retry",
			query: `mutation($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { id } }`, status: 400, code: "VALIDATION_ERROR", field: "active"},

		// recoverDeliveries: POST /v1/webhooks/{id}/recover
		{name: "recoverDeliveries: own", as: alice, ids: freshFailing(alice), changes: true, method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "2020-01-01T00:00:00Z"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "2020-01-01T00:00:00Z") { ...R } }`, at: "recoverDeliveries", status: 200},
		{name: "recoverDeliveries: another user's", as: bob, ids: fixed(map[string]string{"webhookID": aliceHook}), method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "2020-01-01T00:00:00Z"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "2020-01-01T00:00:00Z") { requeued } }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "recoverDeliveries: an admin recovers anyone's, since with an offset", as: admin, ids: freshFailing(alice), changes: true, method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "2020-01-01T02:00:00+02:00"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "2020-01-01T02:00:00+02:00") { ...R } }`, at: "recoverDeliveries", status: 200},
		{name: "recoverDeliveries: since in the future", as: alice, ids: fixed(map[string]string{"webhookID": aliceHook}), method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "2999-01-01T00:00:00Z"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "2999-01-01T00:00:00Z") { requeued } }`, status: 400, code: "VALIDATION_ERROR", field: "since"},
		{name: "recoverDeliveries: since not a time", as: alice, ids: fixed(map[string]string{"webhookID": aliceHook}), method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "yesterday"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "yesterday") { requeued } }`, status: 400, code: "VALIDATION_ERROR", field: "since"},
		{name: "recoverDeliveries: a paused webhook", as: alice, ids: fixed(map[string]string{"webhookID": pausedHook}), method: "POST", path: "/v1/webhooks/{webhookID}/recover",
			body:  map[string]any{"since": "2020-01-01T00:00:00Z"},
			query: `mutation($webhookID: ID!) { recoverDeliveries(webhookID: $webhookID, since: "2020-01-01T00:00:00Z") { requeued } }`, status: 400, code: "VALIDATION_ERROR", field: "active"},

		// deleteWebhook: DELETE /v1/webhooks/{id}
		{name: "deleteWebhook: own", as: alice, ids: fresh(alice), changes: true, method: "DELETE", path: "/v1/webhooks/{id}",
			query: `mutation($id: ID!) { deleteWebhook(id: $id) }`, at: "deleteWebhook", status: 200},
		{name: "deleteWebhook: another user's", as: bob, ids: fixed(map[string]string{"id": aliceHook}), method: "DELETE", path: "/v1/webhooks/{id}",
			query: `mutation($id: ID!) { deleteWebhook(id: $id) }`, status: 403, code: "PERMISSION_DENIED"},
		{name: "deleteWebhook: an admin deletes anyone's", as: admin, ids: fresh(bob), changes: true, method: "DELETE", path: "/v1/webhooks/{id}",
			query: `mutation($id: ID!) { deleteWebhook(id: $id) }`, at: "deleteWebhook", status: 200},
		{name: "deleteWebhook: unknown", as: alice, ids: fixed(map[string]string{"id": unknownHook}), method: "DELETE", path: "/v1/webhooks/{id}",
			query: `mutation($id: ID!) { deleteWebhook(id: $id) }`, status: 404, code: "NOT_FOUND"},

		// Query.events: GET /v1/events
		{name: "events: a user's own", as: alice, method: "GET", path: "/v1/events?limit=50",
			query: `{ events(first: 50) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: another user's own", as: bob, method: "GET", path: "/v1/events?limit=50",
			query: `{ events(first: 50) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: an admin's, everyone's", as: admin, method: "GET", path: "/v1/events?limit=50",
			query: `{ events(first: 50) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: of some types", as: alice, method: "GET", path: "/v1/events?type=item.deleted,item.updated",
			query: `{ events(types: [DELETED, UPDATED]) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: the second page", as: alice, method: "GET", path: "/v1/events?limit=2&cursor={cursor}",
			ids:   secondPage(alice, "/v1/events?limit=2", `{ events(first: 2) { pageInfo { endCursor } } }`, "events"),
			query: `query($after: Cursor) { events(first: 2, after: $after) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: since one seen", as: alice, ids: fixed(map[string]string{"since": aliceEvent}), method: "GET", path: "/v1/events?after={since}",
			query: `query($since: ID) { events(since: $since) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: an admin's since another user's", as: admin, ids: fixed(map[string]string{"since": bobEvent}), method: "GET", path: "/v1/events?after={since}",
			query: `query($since: ID) { events(since: $since) { pageInfo { hasNextPage } edges { node { ...E } } } }`, at: "events", status: 200},
		{name: "events: since another user's", as: alice, ids: fixed(map[string]string{"since": bobEvent}), method: "GET", path: "/v1/events?after={since}",
			query: `query($since: ID) { events(since: $since) { edges { node { id } } } }`, status: 400, code: "VALIDATION_ERROR", field: "after", gqlField: "since"},
		{name: "events: since not an event", as: alice, ids: fixed(map[string]string{"since": aliceHook}), method: "GET", path: "/v1/events?after={since}",
			query: `query($since: ID) { events(since: $since) { edges { node { id } } } }`, status: 400, code: "VALIDATION_ERROR", field: "after", gqlField: "since"},
		{name: "events: since older than the retention", as: alice, ids: fixed(map[string]string{"since": expired}), method: "GET", path: "/v1/events?after={since}",
			query: `query($since: ID) { events(since: $since) { edges { node { id } } } }`, status: 410, code: "CURSOR_EXPIRED", field: "after", gqlField: "since"},
		{name: "events: a cursor older than the retention", as: alice, ids: fixed(map[string]string{"cursor": expired, "after": encodeCursor(expired)}),
			method: "GET", path: "/v1/events?cursor={cursor}",
			query: `query($after: Cursor) { events(after: $after) { edges { node { id } } } }`, status: 410, code: "CURSOR_EXPIRED", field: "cursor", gqlField: "after"},
		// Both ids are checked against the retention before either is
		// looked up: the expired cursor is named, not the foreign since.
		{name: "events: since another user's, a cursor older than the retention", as: alice,
			ids:    fixed(map[string]string{"since": bobEvent, "cursor": expired, "after": encodeCursor(expired)}),
			method: "GET", path: "/v1/events?after={since}&cursor={cursor}",
			query: `query($since: ID, $after: Cursor) { events(since: $since, after: $after) { edges { node { id } } } }`, status: 410, code: "CURSOR_EXPIRED", field: "cursor", gqlField: "after"},
		{name: "events: another list's cursor", as: alice, ids: fixed(map[string]string{"cursor": aliceHook, "after": encodeCursor(aliceHook)}),
			method: "GET", path: "/v1/events?cursor={cursor}",
			query: `query($after: Cursor) { events(after: $after) { edges { node { id } } } }`, status: 400, code: "VALIDATION_ERROR", field: "cursor", gqlField: "after"},
		{name: "events: an unknown type", as: alice, method: "GET", path: "/v1/events?type=item.moved",
			query: `{ events(types: [MOVED]) { edges { node { id } } } }`, status: 400, code: "VALIDATION_ERROR", field: "type", gqlField: "types"},

		// Query.event: GET /v1/events/{id}
		{name: "event: own", as: alice, ids: fixed(map[string]string{"id": aliceEvent}), method: "GET", path: "/v1/events/{id}",
			query: `query($id: ID!) { event(id: $id) { ...E } }`, at: "event", status: 200},
		{name: "event: another user's", as: alice, ids: fixed(map[string]string{"id": bobEvent}), method: "GET", path: "/v1/events/{id}",
			query: `query($id: ID!) { event(id: $id) { ...E } }`, status: 404, code: "NOT_FOUND"},
		{name: "event: an admin reads anyone's", as: admin, ids: fixed(map[string]string{"id": bobEvent}), method: "GET", path: "/v1/events/{id}",
			query: `query($id: ID!) { event(id: $id) { ...E } }`, at: "event", status: 200},
		{name: "event: unknown", as: alice, ids: fixed(map[string]string{"id": unknownEvent}), method: "GET", path: "/v1/events/{id}",
			query: `query($id: ID!) { event(id: $id) { ...E } }`, status: 404, code: "NOT_FOUND"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, env.Env, schema) })
	}
}
