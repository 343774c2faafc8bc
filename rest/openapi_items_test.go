package rest_test

import (
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestItemDocumentIsWhatRESTDoes holds the parts of openapi.json generated
// from ent/schema (rest/openapi/gen) to what the handlers do: the list sorts
// by every documented sort field and by no other field of Item, reads every
// documented filter, and a create refuses every field of Item that
// ItemCreate leaves out (read-only).
func TestItemDocumentIsWhatRESTDoes(t *testing.T) {
	data, err := os.ReadFile("openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
			Parameters map[string]struct {
				Name   string `json:"name"`
				Schema struct {
					Enum []string `json:"enum"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	item := doc.Components.Schemas["Item"].Properties
	sorts := doc.Components.Parameters["sort"].Schema.Enum
	if len(item) == 0 || len(sorts) == 0 {
		t.Fatal("openapi.json has no Item schema or no sort parameter")
	}

	env := testutil.New(t)
	tok := env.Alice.Token
	list := func(name, q string, status int, field string) testutil.Scenario {
		s := testutil.Scenario{Name: name, Method: "GET", Path: "/v1/items?" + q, Token: tok, Status: status}
		if field != "" {
			s.Code, s.Contains = "VALIDATION_ERROR", []string{`"field":"` + field + `"`}
		}
		return s
	}
	props := slices.Sorted(maps.Keys(item))
	var scenarios []testutil.Scenario
	for _, prop := range props {
		if slices.Contains(sorts, prop) {
			scenarios = append(scenarios, list("sorts by "+prop, "sort="+prop, 200, ""))
		} else {
			scenarios = append(scenarios, list("does not sort by "+prop, "sort="+prop, 400, "sort"))
		}
	}
	var listItems struct {
		Parameters []struct {
			Ref string `json:"$ref"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(doc.Paths["/items"]["get"], &listItems); err != nil {
		t.Fatal(err)
	}
	filters := 0
	for _, p := range listItems.Parameters {
		name := doc.Components.Parameters[p.Ref[len("#/components/parameters/"):]].Name
		if _, filter := item[name]; filter {
			filters++
			scenarios = append(scenarios, list("filters by "+name, url.Values{name: {"\x01"}}.Encode(), 400, name))
		}
	}
	if filters == 0 {
		t.Error("GET /items takes no parameter named as a field of Item: the filters are gone")
	}
	create := doc.Components.Schemas["ItemCreate"].Properties
	for _, prop := range props {
		if _, ok := create[prop]; !ok {
			scenarios = append(scenarios, testutil.Scenario{Name: "create refuses " + prop, Method: "POST", Path: "/v1/items", Token: tok,
				Body: map[string]any{"name": "x", prop: "x"}, Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"` + prop + `"`}})
		}
	}
	testutil.Run(t, env, scenarios)
}
