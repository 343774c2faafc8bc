package web

import (
	"strings"
	"testing"
)

// TestRenderPlaceholders: values are HTML-escaped, and a page that names an
// asset, package or value that does not exist fails to render.
func TestRenderPlaceholders(t *testing.T) {
	cases := []struct {
		page    string
		values  map[string]string
		want    string
		wantErr string
	}{
		{"playground.html", map[string]string{"Endpoint": `/g?a="1"&b=<2>`}, `data-endpoint="/g?a=&#34;1&#34;&amp;b=&lt;2&gt;"`, ""},
		{"docs.html", map[string]string{"SpecURL": "/v1/openapi.json"}, `<redoc spec-url="/v1/openapi.json">`, ""},
		{"docs.html", map[string]string{}, "", "docs.html has no value SpecURL"},
		{"missing.html", nil, "", "file does not exist"},
	}
	for _, tc := range cases {
		got, err := render(tc.page, tc.values)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %v: err %v, want %q", tc.page, tc.values, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.page, err)
		case !strings.Contains(string(got), tc.want) || strings.Contains(string(got), "{{"):
			t.Errorf("%s: lacks %s or keeps a placeholder:\n%s", tc.page, tc.want, got)
		}
	}
	if _, err := assetURL("nope.js"); err == nil {
		t.Error("assetURL of an unknown asset: no error")
	}
	if u, err := vendorURL("@graphiql/plugin-explorer/index.umd.js"); err != nil || !strings.HasPrefix(u, "/assets/vendor/@graphiql/plugin-explorer@") {
		t.Errorf("vendorURL of a scoped package: %q, %v", u, err)
	}
	if _, err := vendorURL("nope/x.js"); err == nil {
		t.Error("vendorURL of an unvendored package: no error")
	}
}
