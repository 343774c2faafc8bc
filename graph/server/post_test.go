package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse: the POST transport writes every response byte for
// byte as gqlgen's json.Marshal would, without re-reading the data.
func TestWriteResponse(t *testing.T) {
	yes := true
	remaining, none := int64(849), int64(0)
	for _, tc := range []struct {
		name string
		resp graphql.Response
	}{
		{"data", graphql.Response{Data: json.RawMessage(`{"items":{"totalCount":2}}`)}},
		{"no data", graphql.Response{}},
		{"null data", graphql.Response{Data: json.RawMessage(`null`)}},
		{"errors first", graphql.Response{
			Errors: gqlerror.List{{Message: "no", Path: ast.Path{ast.PathName("item")}, Extensions: map[string]any{"code": "NOT_FOUND"}}},
			Data:   json.RawMessage(`{"item":null}`),
		}},
		{"extensions", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": map[string]any{"complexity": 43, "limit": 1000}},
		}},
		{"the cost", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": costExtension{Complexity: 43, Limit: 1000, Points: 1}},
		}},
		{"the cost, charged", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": costExtension{Complexity: 0, Limit: 1000, Points: 150, Remaining: &remaining, Window: "minute"}},
		}},
		{"the cost, none left", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": costExtension{Complexity: 1, Limit: 1, Points: 1, Remaining: &none, Window: "hour"}},
		}},
		{"the cost of a window json.Marshal escapes", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": costExtension{Complexity: 1, Limit: 1, Points: 1, Remaining: &none, Window: "<Day>"}},
		}},
		{"the cost and another extension", graphql.Response{
			Data:       json.RawMessage(`{"a":1}`),
			Extensions: map[string]any{"cost": costExtension{Complexity: 1, Limit: 1, Points: 1}, "b": 2},
		}},
		{"incremental delivery takes json.Marshal", graphql.Response{
			Data: json.RawMessage(`{"a":1}`), Label: "l", Path: ast.Path{ast.PathName("a")}, HasNext: &yes,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			writeResponse(&got, &tc.resp)
			want, err := json.Marshal(&tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("wrote\n%s\nwant\n%s", got.String(), want)
			}
		})
	}
}
