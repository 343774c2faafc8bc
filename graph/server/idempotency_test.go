package server_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/itemsvc/ent/idempotencykey"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestIdempotencyKeyGraphQL: an Idempotency-Key on POST /graphql applies to
// an operation of one mutation field, as on REST's creating POSTs; one row
// per case, in order (each may rely on the rows before it).
func TestIdempotencyKeyGraphQL(t *testing.T) {
	env := testutil.New(t)
	const create = `mutation($n: String!) { createItem(input: {name: $n}) { id name } }`
	count := func(name string) int {
		n, err := env.App.Service.Client().Item.Query().Where(item.Name(name)).
			Count(privacy.DecisionContext(context.Background(), privacy.Allow))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var first, firstRemaining string
	rows := []struct {
		name   string
		body   string
		key    string
		status int
		code   string
		replay bool
		items  map[string]int // name → items after the row
	}{
		{name: "first createItem with a key", key: "g1", status: 200,
			body: `{"query":"` + create + `","variables":{"n":"gql once"}}`, items: map[string]int{"gql once": 1}},
		{name: "the same request replays", key: "g1", status: 200, replay: true,
			body: `{"variables": {"n": "gql once"}, "query":"` + create + `"}`, items: map[string]int{"gql once": 1}},
		{name: "other variables are 422", key: "g1", status: 422, code: "IDEMPOTENCY_KEY_REUSED",
			body: `{"query":"` + create + `","variables":{"n":"gql other"}}`, items: map[string]int{"gql other": 0}},
		{name: "two mutation fields are refused", key: "g2", status: 400, code: "VALIDATION_ERROR",
			body:  `{"query":"mutation { a: createItem(input: {name: \"two\"}) { id } b: createItem(input: {name: \"two\"}) { id } }"}`,
			items: map[string]int{"two": 0}},
		{name: "a query ignores the key", key: "g1", status: 200, body: `{"query":"{ me { id } }"}`},
		{name: "a mutation that fails is not recorded", key: "g3", status: 200, code: "VALIDATION_ERROR",
			body: `{"query":"` + create + `","variables":{"n":"  "}}`},
		{name: "so its fixed request may reuse the key", key: "g3", status: 200,
			body: `{"query":"` + create + `","variables":{"n":"gql fixed"}}`, items: map[string]int{"gql fixed": 1}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: row.body,
				Headers: map[string]string{"Idempotency-Key": row.key}})
			r := testutil.DecodeGQL(t, res)
			if r.Status != row.status || r.Code() != row.code {
				t.Fatalf("%d %q, want %d %q: %s", r.Status, r.Code(), row.status, row.code, r.Raw)
			}
			if got := res.Header.Get("Idempotent-Replayed") == "true"; got != row.replay {
				t.Errorf("Idempotent-Replayed = %q, want replayed %v", res.Header.Get("Idempotent-Replayed"), row.replay)
			}
			// The data replays; extensions.cost is the retry's own charge.
			data, _ := json.Marshal(r.Data)
			switch {
			case first == "" && row.status == 200 && strings.Contains(string(r.Raw), "createItem"):
				first, firstRemaining = string(data), res.Header.Get("X-RateLimit-Remaining")
			case row.replay && string(data) != first:
				t.Errorf("replayed\n%s\nwant\n%s", data, first)
			}
			if rem := res.Header.Get("X-RateLimit-Remaining"); row.replay && (rem == "" || rem == firstRemaining) {
				t.Errorf("X-RateLimit-Remaining %q after %q: the replay was not charged", rem, firstRemaining)
			}
			if ct := res.Header.Get("Content-Type"); row.status == 200 && ct != "application/json" {
				t.Errorf("Content-Type = %q, want gqlgen's application/json", ct)
			}
			for name, want := range row.items {
				if n := count(name); n != want {
					t.Errorf("%d items named %q, want %d", n, name, want)
				}
			}
		})
	}
}

// TestIdempotencyKeyResponseTooLarge: a mutation whose response is larger
// than what is kept for a retry (service.MaxIdempotentRecord) even deflated
// is refused with the key, and changes nothing.
func TestIdempotencyKeyResponseTooLarge(t *testing.T) {
	env := testutil.New(t)
	for range 15 {
		noise := make([]byte, 3700)
		_, _ = rand.Read(noise)
		r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token,
			Body: map[string]any{"name": "filler", "description": base64.StdEncoding.EncodeToString(noise)}})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	body := map[string]any{"query": `mutation { createItem(input: {name: "big"}) { id owner { items(first: 20) { edges { node { description } } } } } }`}
	count := func() int {
		n, err := env.App.Service.Client().Item.Query().Where(item.Name("big")).
			Count(privacy.DecisionContext(context.Background(), privacy.Allow))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cases := []struct {
		name   string
		key    string
		status int
		code   string
		items  int
	}{
		{"with a key: refused, nothing made", "big-1", 400, "VALIDATION_ERROR", 0},
		{"and again: still nothing made", "big-1", 400, "VALIDATION_ERROR", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.DecodeGQL(t, env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: body,
				Headers: map[string]string{"Idempotency-Key": c.key}}))
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("%d %q, want %d %q: %.300s", r.Status, r.Code(), c.status, c.code, r.Raw)
			}
			if n := count(); n != c.items {
				t.Errorf("%d items named big, want %d", n, c.items)
			}
		})
	}
}

// TestIdempotencyRecordBounded: 100 keyed no-op updates that select a
// large response are each served and recorded, none refused for storage,
// and no record keeps more than service.MaxIdempotentRecord bytes; a retry
// replays the same data, and the stored bytes are the metric
// itemsvc_idempotency_stored_bytes.
func TestIdempotencyRecordBounded(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute, c.RateLimitPerHour = 10000, 10000
	}))
	long := strings.Repeat("d", 5000)
	var id string
	for range 12 {
		id = env.CreateItem(env.Alice, "filler")
		r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token,
			Body: map[string]any{"description": long}})
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	body := map[string]any{"query": `mutation($id: ID!) { updateItem(id: $id, input: {}) { id owner { items(first: 100) { edges { node { description } } } } } }`,
		"variables": map[string]any{"id": id}}
	var first []byte
	for i := range 100 {
		r := testutil.DecodeGQL(t, env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: body,
			Headers: map[string]string{"Idempotency-Key": fmt.Sprintf("noop-%d", i)}}))
		if r.Status != 200 || len(r.Errors) > 0 {
			t.Fatalf("request %d: %d %q: %.300s", i, r.Status, r.Code(), r.Raw)
		}
		if i == 0 {
			first, _ = json.Marshal(r.Data)
			if len(first) <= service.MaxIdempotentRecord {
				t.Fatalf("a response of %d bytes: want one larger than a record keeps (%d)", len(first), service.MaxIdempotentRecord)
			}
		}
	}
	recs, err := env.App.Service.Client().IdempotencyKey.Query().Where(idempotencykey.UserID(env.Alice.UserID)).
		All(privacy.DecisionContext(context.Background(), privacy.Allow))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, rec := range recs {
		if len(rec.Body) > service.MaxIdempotentRecord {
			t.Errorf("record %q keeps %d bytes, want at most %d", rec.Key, len(rec.Body), service.MaxIdempotentRecord)
		}
		total += len(rec.Body)
	}
	if len(recs) != 100 {
		t.Errorf("%d records, want 100", len(recs))
	}
	res := env.Do(testutil.Request{Method: "POST", Path: "/graphql", Token: env.Alice.Token, Body: body,
		Headers: map[string]string{"Idempotency-Key": "noop-7"}})
	r := testutil.DecodeGQL(t, res)
	if again, _ := json.Marshal(r.Data); res.Header.Get("Idempotent-Replayed") != "true" || string(again) != string(first) {
		t.Errorf("retry: replayed %q, data equal %v: %.300s", res.Header.Get("Idempotent-Replayed"), string(again) == string(first), r.Raw)
	}
	if g := env.Scrape().Value("itemsvc_idempotency_stored_bytes", nil); g != float64(total) {
		t.Errorf("itemsvc_idempotency_stored_bytes = %v, want %d", g, total)
	}
}
