package rest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/acme/itemsvc/internal/testutil"
)

// checkEnvelope fails unless r is a well-formed envelope with a status the
// client could have caused (never a 5xx).
func checkEnvelope(t *testing.T, r *testutil.Response) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("status %d for client input: %s", r.Status, r.Body)
	}
	var env struct {
		Success *bool           `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   *struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Success == nil {
		t.Fatalf("not an envelope (status %d): %q", r.Status, r.Body)
	}
	if *env.Success != (r.Status < 400) || (!*env.Success && (env.Error == nil || env.Error.Code == "" || env.Error.Details == nil)) {
		t.Fatalf("inconsistent envelope for status %d: %s", r.Status, r.Body)
	}
}

// FuzzItemBodies sends arbitrary bodies to create and update: every answer
// is an envelope, never a 500 or a panic. The seed corpus runs with the
// normal tests; `make fuzz` explores further.
func FuzzItemBodies(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x"}`, `{"name":"x","description":"y","status":"archived"}`, `{}`, `[]`, `null`, ``, `"x"`,
		`{"name":1}`, `{"name":null}`, `{"name":"\u0000"}`, `{"name":"` + "\xff\xfe" + `"}`, `{"name":"a","name":"b"}`,
		`{"name":"x"} trailing`, `{"status":"active"}`, `{"id":"item_1","user_id":"u","created_at":"c","updated_at":"u"}`,
		`{"name":{"nested":true}}`, `{"name":["x"]}`, `{"description":1e400}`, `{"name":"` + string(bytes.Repeat([]byte("é"), 300)) + `"}`,
	} {
		f.Add(true, []byte(seed))
		f.Add(false, []byte(seed))
	}
	env := testutil.New(f)
	id := env.CreateItem(env.Alice, "target")
	f.Fuzz(func(t *testing.T, create bool, body []byte) {
		req := httptest.NewRequest("POST", "/v1/items", bytes.NewReader(body))
		if !create {
			req = httptest.NewRequest("PUT", "/v1/items/"+id, bytes.NewReader(body))
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		checkEnvelope(t, env.Serve(req))
	})
}

// FuzzListQuery sends arbitrary query strings to the list.
func FuzzListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "page=1&limit=20", "page=0", "limit=101", "page=-1", "page=1e3", "limit=%zz", "status=archived",
		"sort=name&order=asc", "sort=id", "order=DESC", "user_id=user_01m80r92d8jcq7kyybma0724rk", "user_id=",
		"page=99999999999999999999", "limit=1&limit=2", "a=%00", ";;;", "page=1;limit=2", "sort=name%27--",
		"cursor=", "cursor=%FF", "cursor=AAAA", "page=2&cursor=AAAA", "sort=name&cursor=hKFpv2l0ZW1f",
	} {
		f.Add(seed)
	}
	// Cursors of the right shape, for the fuzzer to bend.
	for _, c := range []map[string]any{
		{"i": "item_01m80r92d8jcq7kyybma0724rk", "v": time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), "s": "created_at", "d": true},
		{"i": "item_01m80r92d8jcq7kyybma0724rk", "v": "one", "s": "name", "d": true},
	} {
		b, err := msgpack.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add("limit=1&sort=" + c["s"].(string) + "&cursor=" + base64.RawURLEncoding.EncodeToString(b))
	}
	env := testutil.New(f)
	env.CreateItem(env.Alice, "one")
	f.Fuzz(func(t *testing.T, raw string) {
		req := httptest.NewRequest("GET", "/v1/items", nil)
		req.URL.RawQuery = raw
		req.Header.Set("Authorization", "Bearer "+env.Alice.Token)
		checkEnvelope(t, env.Serve(req))
	})
}
