package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/webhookendpoint"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestCreateWebhookIdempotent: createWebhook with an Idempotency-Key is
// created once and replayed after, as REST's POST /v1/webhooks is, without
// its secret (null in GraphQL, absent on REST), which no record keeps. Its
// answer may select the new webhook's deliveries: they are
// read in the request's transaction, which has not committed yet (read
// outside it, the webhook did not exist, the field failed, and the change
// rolled back).
func TestCreateWebhookIdempotent(t *testing.T) {
	env := newParityEnv(t)
	count := func(url string) int {
		n, err := env.App.DB.Client.WebhookEndpoint.Query().Where(webhookendpoint.URL(url)).
			Count(privacy.DecisionContext(context.Background(), privacy.Allow))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const (
		restURL = "https://hooks.example.com/rest-once"
		gqlURL  = "https://hooks.example.com/graphql-once"
		create  = `mutation($url: String!) { createWebhook(input: {url: $url}) { id secret deliveries { totalCount edges { node { id } } } } }`
	)
	rows := []struct {
		name   string
		req    testutil.Request
		status int
		replay bool
		url    string
	}{
		{"REST: created", testutil.Request{Method: "POST", Path: "/v1/webhooks", Body: map[string]any{"url": restURL}}, 201, false, restURL},
		{"REST: replayed", testutil.Request{Method: "POST", Path: "/v1/webhooks", Body: map[string]any{"url": restURL}}, 201, true, restURL},
		{"GraphQL: created, with its deliveries", testutil.Request{Method: "POST", Path: "/graphql",
			Body: map[string]any{"query": create, "variables": map[string]any{"url": gqlURL}}}, 200, false, gqlURL},
		{"GraphQL: replayed", testutil.Request{Method: "POST", Path: "/graphql",
			Body: map[string]any{"query": create, "variables": map[string]any{"url": gqlURL}}}, 200, true, gqlURL},
	}
	first := map[string]string{}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			row.req.Token = env.Alice.Token
			row.req.Headers = map[string]string{"Idempotency-Key": "once-" + row.url}
			res := env.Do(row.req)
			if res.Status != row.status || (row.req.Path == "/graphql" && len(testutil.DecodeGQL(t, res).Errors) > 0) {
				t.Fatalf("%d %s, want %d", res.Status, res.Body, row.status)
			}
			if got := res.Header.Get("Idempotent-Replayed") == "true"; got != row.replay {
				t.Errorf("Idempotent-Replayed %q, want replayed %v", res.Header.Get("Idempotent-Replayed"), row.replay)
			}
			data := withoutSecret(t, res.Body)
			if row.replay && data != first[row.url] {
				t.Errorf("replayed\n%s\nwant the first answer without its secret\n%s", data, first[row.url])
			}
			if row.replay && strings.Contains(string(res.Body), "whsec_") {
				t.Errorf("the replay shows the secret: %s", res.Body)
			}
			if !row.replay {
				first[row.url] = data
			}
			if n := count(row.url); n != 1 {
				t.Errorf("%d webhooks at %s, want 1", n, row.url)
			}
		})
	}
}

// withoutSecret is the data of an answer with its webhook's secret as a
// replay has it: absent from REST's data, null in GraphQL's.
func withoutSecret(t *testing.T, body []byte) string {
	t.Helper()
	var res struct{ Data map[string]any }
	testutil.MustJSON(t, body, &res)
	if w, ok := res.Data["createWebhook"].(map[string]any); ok {
		w["secret"] = nil
	} else {
		delete(res.Data, "secret")
	}
	b, err := json.Marshal(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
