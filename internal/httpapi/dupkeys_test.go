package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDuplicateKey: a name repeated within one object, at any depth, is
// found and named by its path; equal names in different objects, and
// names only alike before unescaping, are told apart correctly.
func TestDuplicateKey(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf(`"f%d":%d`, i, i)
	}
	wide := "{" + strings.Join(many, ",") + "}"
	for _, tc := range []struct {
		body, want string
	}{
		{`{}`, ""},
		{`{"scopes":["read"],"label":"x"}`, ""},
		{`{"scopes":["read"],"scopes":["read","write"]}`, "scopes"},
		{` { "a" : 1 , "b" : [ 1 , { "a" : 2 } ] , "c" : { "a" : { "a" : null } } } `, ""},
		{`{"name":"a","n\u0061me":"b"}`, "name"},
		{`{"a\"b":1,"a\\b":2,"a":{"x":true,"y":false,"x":1e5}}`, "a.x"},
		{`{"list":[{"k":1},{"k":2,"k":3}]}`, "list.k"},
		{`{"":1,"":2}`, ""},
		{wide, ""},
		{strings.TrimSuffix(wide, "}") + `,"f39":0}`, "f39"},
		{strings.TrimSuffix(wide, "}") + `,"f3":0}`, "f3"},
	} {
		if !json.Valid([]byte(tc.body)) {
			t.Fatalf("not JSON: %s", tc.body)
		}
		name, dup := DuplicateKey([]byte(strings.TrimSpace(tc.body)))
		want := tc.want
		if tc.body == `{"":1,"":2}` {
			want, dup = "", dup && name == "" // the empty name repeated
			if !dup {
				t.Errorf("%s: repeated empty name not found", tc.body)
			}
			continue
		}
		if name != want || dup != (want != "") {
			t.Errorf("%s: duplicateKey = %q, %v; want %q", tc.body, name, dup, want)
		}
	}
}

// BenchmarkDuplicateKey: the scan of an ordinary body, and of one near the
// size limit, beside what decoding the same body costs.
func BenchmarkDuplicateKey(b *testing.B) {
	small := []byte(`{"name":"Quarterly report","description":"Figures for the board, second draft","status":"active"}`)
	big := []byte(`{"name":"x","description":"` + strings.Repeat("lorem ipsum ", 80_000) + `"}`)
	for _, body := range []struct {
		name string
		data []byte
	}{{"small", small}, {"1MB", big}} {
		b.Run("scan/"+body.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, dup := DuplicateKey(body.data); dup {
					b.Fatal("duplicate")
				}
			}
		})
		b.Run("decode/"+body.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var o map[string]json.RawMessage
				if err := json.Unmarshal(body.data, &o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
