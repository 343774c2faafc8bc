package testutil

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestContractCatchesDrift feeds the contract check responses that differ
// from the document in each way drift shows, and ones that match: a check
// that could not fail would let the document drift unseen. Routes and methods
// the document lacks fail unless the server too says they do not exist.
func TestContractCatchesDrift(t *testing.T) {
	c, err := LoadContract(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const (
		meta = `"meta":{"timestamp":"2026-01-01T00:00:00Z","request_id":"r1"}`
		item = `{"id":"item_01","name":"x","description":"","status":"active","user_id":"user_01","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`
		user = `{"id":"user_01","email":"a@example.com","name":"A","role":"user","disabled":false,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`
	)
	jsonHeader := func(extra ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"r1"}}
		for i := 0; i+1 < len(extra); i += 2 {
			h.Set(extra[i], extra[i+1])
		}
		return h
	}
	auth := http.Header{"Authorization": {"Bearer t"}}
	cases := []struct {
		name, method, path string
		reqHeader          http.Header
		reqBody            string
		status             int
		header             http.Header
		body               string
		wantErr            string // "" when the exchange matches the document
		noContentType      bool
	}{
		{name: "matching success", method: "GET", path: "/v1/users/me", reqHeader: auth, status: 200, header: jsonHeader(),
			body: `{"success":true,"data":` + user + `,` + meta + `}`},
		{name: "matching failure", method: "GET", path: "/v1/users/me", status: 401, header: jsonHeader(),
			body: `{"success":false,"error":{"code":"UNAUTHORIZED","message":"no","details":{}},` + meta + `}`},
		{name: "field missing", method: "GET", path: "/v1/users/me", reqHeader: auth, status: 200, header: jsonHeader(),
			body: `{"success":true,"data":{"id":"user_01"},` + meta + `}`, wantErr: "email"},
		{name: "undocumented field", method: "GET", path: "/v1/users/me", reqHeader: auth, status: 200, header: jsonHeader(),
			body: `{"success":true,"data":` + strings.Replace(user, `{`, `{"secret":"x",`, 1) + `,` + meta + `}`, wantErr: "secret"},
		{name: "undocumented status", method: "GET", path: "/v1/users/me", reqHeader: auth, status: 418, header: jsonHeader(),
			body: `{}`, wantErr: "status is not supported"},
		{name: "code of another status", method: "GET", path: "/v1/users/me", status: 401, header: jsonHeader(),
			body: `{"success":false,"error":{"code":"NOT_FOUND","message":"no","details":{}},` + meta + `}`, wantErr: "code"},
		{name: "request id header missing", method: "GET", path: "/v1/users/me", reqHeader: auth, status: 200,
			header: http.Header{"Content-Type": {"application/json"}}, body: `{"success":true,"data":` + user + `,` + meta + `}`, wantErr: "X-Request-ID"},
		{name: "create without Location", method: "POST", path: "/v1/items", reqHeader: auth, reqBody: `{"name":"x"}`, status: 201,
			header: jsonHeader("ETag", `"e1"`), body: `{}`, wantErr: "Location"},
		{name: "create without ETag", method: "POST", path: "/v1/items", reqHeader: auth, reqBody: `{"name":"x"}`, status: 201,
			header: jsonHeader("Location", "/v1/items/item_01"), body: `{}`, wantErr: "ETag"},
		{name: "body without Content-Type is JSON", method: "POST", path: "/v1/items", reqHeader: auth, reqBody: `{"name":"x"}`, noContentType: true,
			status: 201, header: jsonHeader("Location", "/v1/items/item_01", "ETag", `"e1"`), body: `{"success":true,"data":` + item + `,` + meta + `}`},
		{name: "refused request accepted", method: "GET", path: "/v1/items?limit=500", reqHeader: auth, status: 200, header: jsonHeader(),
			body: `{}`, wantErr: "the document refuses this request"},
		{name: "undocumented path served", method: "GET", path: "/v1/widgets", reqHeader: auth, status: 200, header: jsonHeader(),
			body: `{"success":true,"data":[],` + meta + `}`, wantErr: "not in the OpenAPI document, but the server serves it"},
		{name: "undocumented path refused by its handler", method: "GET", path: "/v1/widgets/w1", reqHeader: auth, status: 404, header: jsonHeader(),
			body: `{"success":false,"error":{"code":"NOT_FOUND","message":"widget not found","details":{}},` + meta + `}`, wantErr: "not its unknown-route answer"},
		{name: "undocumented path, the router's unknown route", method: "GET", path: "/v1/nope", status: 404, header: jsonHeader(),
			body: `{"success":false,"error":{"code":"NOT_FOUND","message":"route not found","details":{}},` + meta + `}`},
		{name: "undocumented path, failure not an envelope", method: "GET", path: "/v1/nope", status: 404, header: jsonHeader(),
			body: `{"error":"nope"}`, wantErr: "success"},
		{name: "undocumented method served", method: "PATCH", path: "/v1/items/item_01", reqHeader: auth, reqBody: `{}`, status: 200, header: jsonHeader(),
			body: `{"success":true,"data":` + item + `,` + meta + `}`, wantErr: "PATCH /v1/items/item_01 is not in the OpenAPI document"},
		{name: "undocumented method refused, Allow as documented", method: "PATCH", path: "/v1/items/item_01", reqHeader: auth, reqBody: `{}`, status: 405,
			header: jsonHeader("Allow", "GET, PUT, DELETE"), body: `{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"no","details":{}},` + meta + `}`},
		{name: "undocumented method refused, Allow names an undocumented one", method: "PATCH", path: "/v1/items/item_01", reqHeader: auth, reqBody: `{}`, status: 405,
			header: jsonHeader("Allow", "GET, PUT, DELETE, POST"), body: `{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"no","details":{}},` + meta + `}`, wantErr: "the server allows"},
		{name: "CORS preflight of a documented path", method: "OPTIONS", path: "/v1/items",
			reqHeader: http.Header{"Origin": {"https://app.example.com"}, "Access-Control-Request-Method": {"POST"}}, status: 204, header: http.Header{}},
		{name: "CORS preflight of an undocumented path", method: "OPTIONS", path: "/v1/widgets",
			reqHeader: http.Header{"Origin": {"https://app.example.com"}, "Access-Control-Request-Method": {"POST"}}, status: 204, header: http.Header{}, wantErr: "not in the OpenAPI document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.reqHeader
			if h == nil {
				h = http.Header{}
			}
			if tc.reqBody != "" && !tc.noContentType {
				h = h.Clone()
				h.Set("Content-Type", "application/json")
			}
			res := &Response{Status: tc.status, Header: tc.header, Body: []byte(tc.body)}
			err := c.Check(context.Background(), tc.method, tc.path, h, []byte(tc.reqBody), res)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("no error, want one about %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}
