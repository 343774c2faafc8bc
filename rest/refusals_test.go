package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/itemsvc/internal/httpapi"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// TestEveryOperationDeclaresItsRefusals: the refusals that come before any
// handler (a body over the limit on every /v1 route, a body that is not
// JSON on those that take one) are provoked on every operation of the
// OpenAPI document through the real router, so the contract check of
// testutil fails for an operation that does not declare them; and every
// operation declares 405, 429 and 503, which can meet any of them.
func TestEveryOperationDeclaresItsRefusals(t *testing.T) {
	env := testutil.New(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rest.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	ids := strings.NewReplacer("{id}", "item_01m80rv1h8d119v06vwk93e0ze", "{delivery_id}", "dlv_01m80rv1h8d119v06vwk93e0ze")
	big := strings.Repeat(" ", httpapi.MaxBodyBytes+1)
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			t.Run(strings.ToUpper(method)+" "+path, func(t *testing.T) {
				if path == "/openapi.json" {
					if op.Responses["405"] == nil {
						t.Error("405 not declared")
					}
					return
				}
				for _, code := range []string{"405", "413", "429", "503"} {
					if op.Responses[code] == nil {
						t.Errorf("%s not declared", code)
					}
				}
				target := "/v1" + ids.Replace(path)
				res := env.Do(testutil.Request{Method: strings.ToUpper(method), Path: target, Body: big})
				if res.Status != http.StatusRequestEntityTooLarge || res.ErrorCode() != "PAYLOAD_TOO_LARGE" {
					t.Errorf("body over the limit: %d %s", res.Status, res.Body)
				}
				if method != "post" && method != "put" {
					return
				}
				res = env.Do(testutil.Request{Method: strings.ToUpper(method), Path: target, Body: "name=x",
					Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
				if res.Status != http.StatusUnsupportedMediaType || res.ErrorCode() != "UNSUPPORTED_MEDIA_TYPE" {
					t.Errorf("a form body: %d %s", res.Status, res.Body)
				}
			})
		}
	}
}
