package rest

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRequestBodiesAreWhatRESTDecodes holds the request bodies openapi.json
// generates from ent/schema (rest/openapi/gen) to the fields each handler
// allows: a create body has the fields the create decodes, an update body
// those the update sets, the read-only ones it takes back unchanged and
// those it accepts and ignores, each described so.
func TestRequestBodiesAreWhatRESTDecodes(t *testing.T) {
	data, err := os.ReadFile("openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		resource       string
		create, update []string
		ro             readOnly
	}{
		{"Item", itemBody.create, itemBody.update, itemBody.readOnly},
		{"User", userCreateFields, userUpdateFields, userReadOnly},
		{"APIKey", keyCreateFields, keyUpdateFields, keyReadOnly},
		{"Webhook", webhookFields, webhookFields, webhookReadOnly},
	} {
		t.Run(r.resource, func(t *testing.T) {
			create := slices.Sorted(maps.Keys(doc.Components.Schemas[r.resource+"Create"].Properties))
			if want := slices.Sorted(slices.Values(r.create)); !slices.Equal(create, want) {
				t.Errorf("%sCreate has %v, the handler takes %v", r.resource, create, want)
			}
			var settable, fixed, kept []string
			for name, p := range doc.Components.Schemas[r.resource+"Update"].Properties {
				switch {
				case strings.HasPrefix(p.Description, "Read-only:"):
					fixed = append(fixed, name)
				case strings.HasPrefix(p.Description, "Kept by the server"):
					kept = append(kept, name)
				default:
					settable = append(settable, name)
				}
			}
			for _, c := range []struct {
				what      string
				doc, want []string
			}{{"sets", settable, r.update}, {"takes back unchanged", fixed, r.ro.fixed}, {"ignores", kept, r.ro.kept}} {
				slices.Sort(c.doc)
				if want := slices.Sorted(slices.Values(c.want)); !slices.Equal(c.doc, want) {
					t.Errorf("%sUpdate says an update %s %v, the handler %v", r.resource, c.what, c.doc, want)
				}
			}
		})
	}
}
