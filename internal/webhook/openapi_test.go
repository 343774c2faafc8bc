package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// TestDeliveriesMatchOpenAPI holds real deliveries of the three events to
// the webhooks section of the OpenAPI document (/v1/openapi.json): the
// Standard Webhooks headers and the body {id, event, data, timestamp}.
func TestDeliveriesMatchOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(rest.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	env := testutil.New(t, fastWebhooks())
	rc := newReceiver(t)
	register(t, env, env.Alice, rc.URL)
	start(t, env)

	id := env.CreateItem(env.Alice, "described")
	if res := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token, Body: map[string]any{"status": "archived"}}); res.Status != http.StatusOK {
		t.Fatalf("PUT: %d %s", res.Status, res.Body)
	}
	if res := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token}); res.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", res.Status, res.Body)
	}
	events := []string{"item.created", "item.updated", "item.deleted"}
	got := rc.waitAll(t, 10*time.Second, eventIs(events[0], id), eventIs(events[1], id), eventIs(events[2], id))

	for i, event := range events {
		t.Run(event, func(t *testing.T) {
			item := doc.Webhooks[event]
			if item == nil || item.Post == nil {
				t.Fatalf("the document has no webhooks.%s.post", event)
			}
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(got[i].Body))
			req.Header = got[i].Header.Clone()
			in := &openapi3filter.RequestValidationInput{
				Request: req,
				Route:   &routers.Route{Spec: doc, Path: "/", PathItem: item, Method: http.MethodPost, Operation: item.Post},
				Options: &openapi3filter.Options{MultiError: true},
			}
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Errorf("the delivery does not match webhooks.%s: %v\nheaders %v\nbody %s", event, err, got[i].Header, got[i].Body)
			}
		})
	}
	// A body of another event is refused by each definition: the document
	// says which event each one carries.
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(got[0].Body))
	req.Header = got[0].Header.Clone()
	item := doc.Webhooks["item.deleted"]
	in := &openapi3filter.RequestValidationInput{Request: req, Route: &routers.Route{Spec: doc, Path: "/", PathItem: item, Method: http.MethodPost, Operation: item.Post}}
	if openapi3filter.ValidateRequest(context.Background(), in) == nil {
		t.Error("an item.created body validates as item.deleted")
	}
}
