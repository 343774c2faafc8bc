package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestItemsContract has one row per row of the DESIGN §3 status table that
// concerns items, plus the item field rules.
func TestItemsContract(t *testing.T) {
	env := testutil.New(t)
	alice, bob, admin := env.Alice, env.Bob, env.Admin
	mine := env.CreateItem(alice, "alice's item")
	other := env.CreateItem(bob, "bob's item")
	const unknown = "item_01m80r92d8jcq7kyybma0724rk"
	long := strings.Repeat("é", 201) // 201 characters, 402 bytes

	testutil.Run(t, env, []testutil.Scenario{
		// success rows
		{Name: "create 201 with Location", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body: map[string]any{"name": "  Trimmed  ", "description": "d"}, Status: 201,
			Contains: []string{`"name":"Trimmed"`, `"status":"active"`, `"user_id":"` + alice.UserID + `"`},
			Check: func(t *testing.T, r *testutil.Response) {
				var it struct{ ID string }
				r.Data(t, &it)
				if loc := r.Header.Get("Location"); loc != "/v1/items/"+it.ID {
					t.Errorf("Location = %q, want /v1/items/%s", loc, it.ID)
				}
			}},
		{Name: "create with status", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body: map[string]any{"name": "n", "status": "archived"}, Status: 201, Contains: []string{`"status":"archived"`}},
		{Name: "create 200 characters of multibyte name", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body: map[string]any{"name": strings.Repeat("é", 200)}, Status: 201},
		{Name: "get own", Method: "GET", Path: "/v1/items/" + mine, Token: alice.Token, Status: 200, Contains: []string{mine}},
		{Name: "admin gets anyone's", Method: "GET", Path: "/v1/items/" + other, Token: admin.Token, Status: 200, Contains: []string{other}},
		{Name: "put own", Method: "PUT", Path: "/v1/items/" + mine, Token: alice.Token,
			Body: map[string]any{"description": "new"}, Status: 200, Contains: []string{`"description":"new"`, `"name":"alice's item"`}},

		// 400 VALIDATION_ERROR
		{Name: "body not JSON", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "body is an array", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `[{"name":"x"}]`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "empty body", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: ``,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "two objects", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"a"}{"name":"b"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"body"`}},
		{Name: "wrong type of name", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":42}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`, `"reason":"must be a string"`}},
		{Name: "null name", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":null}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "missing name", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"description":"x"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`, `"reason":"is required"`}},
		{Name: "blank name", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"   "}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "name too long", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: map[string]any{"name": long},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`, "at most 200"}},
		{Name: "description too long", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body:   map[string]any{"name": "x", "description": strings.Repeat("a", 5001)},
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"description"`}},
		{Name: "NUL in name", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"a\u0000b"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},
		{Name: "bad status", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"x","status":"deleted"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"status"`}},
		{Name: "unknown body field", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"x","colour":"red"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"colour"`}},
		{Name: "owner is not settable on create", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body: map[string]any{"name": "x", "user_id": bob.UserID}, Status: 400, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"user_id"`}},
		{Name: "put unknown field", Method: "PUT", Path: "/v1/items/" + mine, Token: alice.Token, Body: `{"owner":"x"}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"owner"`}},
		{Name: "put wrong type", Method: "PUT", Path: "/v1/items/" + mine, Token: alice.Token, Body: `{"description":1}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"description"`}},
		{Name: "put empty name", Method: "PUT", Path: "/v1/items/" + mine, Token: alice.Token, Body: `{"name":""}`,
			Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"name"`}},

		// 401
		{Name: "no token", Method: "GET", Path: "/v1/items", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "not a bearer token", Method: "GET", Path: "/v1/items", Headers: map[string]string{"Authorization": "Basic abc"},
			Status: 401, Code: "UNAUTHORIZED"},
		{Name: "malformed token", Method: "GET", Path: "/v1/items", Token: "not.a.jwt", Status: 401, Code: "UNAUTHORIZED"},
		{Name: "bad signature", Method: "GET", Path: "/v1/items", Token: alice.Token[:len(alice.Token)-4] + "AAAA",
			Status: 401, Code: "UNAUTHORIZED"},
		{Name: "api key instead of token", Method: "GET", Path: "/v1/items", Token: alice.Key, Status: 401, Code: "UNAUTHORIZED",
			NotContains: []string{alice.Key}},

		// 403
		{Name: "get another user's item", Method: "GET", Path: "/v1/items/" + other, Token: alice.Token, Status: 403, Code: "PERMISSION_DENIED",
			NotContains: []string{"bob's item"}},
		{Name: "put another user's item", Method: "PUT", Path: "/v1/items/" + other, Token: alice.Token,
			Body: map[string]any{"name": "stolen"}, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "delete another user's item", Method: "DELETE", Path: "/v1/items/" + other, Token: alice.Token, Status: 403, Code: "PERMISSION_DENIED"},
		{Name: "list another user's items", Method: "GET", Path: "/v1/items?user_id=" + bob.UserID, Token: alice.Token,
			Status: 403, Code: "PERMISSION_DENIED"},

		// 404
		{Name: "unknown item", Method: "GET", Path: "/v1/items/" + unknown, Token: alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "malformed item id", Method: "GET", Path: "/v1/items/nope", Token: alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "put unknown item", Method: "PUT", Path: "/v1/items/" + unknown, Token: alice.Token, Body: `{"name":"x"}`, Status: 404, Code: "NOT_FOUND"},
		{Name: "delete unknown item", Method: "DELETE", Path: "/v1/items/" + unknown, Token: alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "unknown route", Method: "GET", Path: "/v1/nothing", Token: alice.Token, Status: 404, Code: "NOT_FOUND"},
		{Name: "unknown route without token", Method: "GET", Path: "/elsewhere", Status: 404, Code: "NOT_FOUND"},
		{Name: "trailing slash is another route", Method: "GET", Path: "/v1/items/", Token: alice.Token, Status: 404, Code: "NOT_FOUND"},

		// 405
		{Name: "wrong method on collection", Method: "PATCH", Path: "/v1/items", Token: alice.Token, Body: `{}`,
			Status: 405, Code: "METHOD_NOT_ALLOWED", Check: allowHas("GET", "POST")},
		{Name: "wrong method on item", Method: "POST", Path: "/v1/items/" + mine, Token: alice.Token, Body: `{}`,
			Status: 405, Code: "METHOD_NOT_ALLOWED", Check: allowHas("GET", "PUT", "DELETE")},
		{Name: "wrong method on login", Method: "GET", Path: "/v1/auth/login", Status: 405, Code: "METHOD_NOT_ALLOWED", Check: allowHas("POST")},

		// 413
		{Name: "body over 1 MiB", Method: "POST", Path: "/v1/items", Token: alice.Token,
			Body: `{"name":"x","description":"` + strings.Repeat("a", 1<<20) + `"}`, Status: 413, Code: "PAYLOAD_TOO_LARGE"},

		// 415
		{Name: "form body", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: "name=x",
			Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "text body on put", Method: "PUT", Path: "/v1/items/" + mine, Token: alice.Token, Body: `{"name":"x"}`,
			Headers: map[string]string{"Content-Type": "text/plain"}, Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "json with charset is fine", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"x"}`,
			Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}, Status: 201},
		{Name: "no content type is read as JSON", Method: "POST", Path: "/v1/items", Token: alice.Token, Body: `{"name":"x"}`,
			Headers: map[string]string{"Content-Type": ""}, Status: 201},
	})
}

func allowHas(methods ...string) func(*testing.T, *testutil.Response) {
	return func(t *testing.T, r *testutil.Response) {
		allow := r.Header.Get("Allow")
		for _, m := range methods {
			if !strings.Contains(allow, m) {
				t.Errorf("Allow = %q, want it to list %s", allow, m)
			}
		}
	}
}

// TestDeleteItem: 200 with {id, deleted}; the item is gone afterwards.
func TestDeleteItem(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "doomed")
	r := env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token})
	testutil.Scenario{Status: 200, Contains: []string{`"data":{"deleted":true,"id":"` + id + `"}`}}.Assert(t, r)
	r = env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token})
	testutil.Scenario{Status: 404, Code: "NOT_FOUND"}.Assert(t, r)
	r = env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + id, Token: env.Alice.Token})
	testutil.Scenario{Status: 404, Code: "NOT_FOUND"}.Assert(t, r)
}

// TestPutSemantics: partial update; read-only fields accepted as they are so
// a client can send back what it got, refused naming them with another
// value (updated_at, the server's to move, is ignored); updated_at moves on
// a change and only on a change.
func TestPutSemantics(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "original")
	var got map[string]any
	env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token}).Data(t, &got)

	// Round trip: everything as it was, read-only fields included.
	r := env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token, Body: got})
	var same map[string]any
	r.Data(t, &same)
	if same["updated_at"] != got["updated_at"] {
		t.Errorf("a PUT that changes nothing moved updated_at: %v -> %v", got["updated_at"], same["updated_at"])
	}

	// Read-only fields with other values are refused, naming them; nothing
	// changes.
	for field, v := range map[string]any{"id": "item_01jd0000000000000000000000", "user_id": env.Bob.UserID, "created_at": "2000-01-01T00:00:00Z"} {
		r = env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token, Body: map[string]any{"name": "renamed", field: v}})
		testutil.Scenario{Status: 400, Code: "VALIDATION_ERROR", Contains: []string{`"field":"` + field + `"`, `"reason":"is read-only`}}.Assert(t, r)
	}
	// The same values in another spelling are the same; updated_at is the
	// server's and any value is ignored.
	created, _ := time.Parse(time.RFC3339Nano, got["created_at"].(string))
	body := map[string]any{"id": id, "user_id": env.Alice.UserID, "created_at": created.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano),
		"updated_at": "2000-01-01T00:00:00Z", "name": "renamed"}
	r = env.Do(testutil.Request{Method: "PUT", Path: "/v1/items/" + id, Token: env.Alice.Token, Body: body})
	var upd map[string]any
	r.Data(t, &upd)
	switch {
	case upd["id"] != id, upd["user_id"] != env.Alice.UserID, upd["created_at"] != got["created_at"]:
		t.Errorf("read-only fields changed: %v", upd)
	case upd["name"] != "renamed", upd["description"] != got["description"], upd["status"] != got["status"]:
		t.Errorf("partial update wrong: %v", upd)
	case upd["updated_at"] == got["updated_at"]:
		t.Errorf("updated_at did not move on a change")
	}
}

// TestResponseHeaders: request ids are accepted or made, and echoed.
func TestResponseHeaders(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token,
		Headers: map[string]string{"X-Request-ID": "abc-123"}})
	testutil.Scenario{Status: http.StatusOK, Contains: []string{`"request_id":"abc-123"`, env.Alice.UserID, `"email":"alice@example.com"`},
		HeaderIs: map[string]string{"X-Request-ID": "abc-123", "X-Content-Type-Options": "nosniff"}}.Assert(t, r)

	r = env.Do(testutil.Request{Method: "GET", Path: "/v1/users/me", Token: env.Alice.Token,
		Headers: map[string]string{"X-Request-ID": "bad id with spaces"}})
	if id := r.Header.Get("X-Request-ID"); id == "" || strings.Contains(id, " ") {
		t.Errorf("unsafe request id echoed: %q", id)
	}
}

// TestCreateTimestamps: a new item's updated_at equals its created_at.
func TestCreateTimestamps(t *testing.T) {
	env := testutil.New(t)
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/items", Token: env.Alice.Token, Body: map[string]any{"name": "x"}})
	var it struct {
		CreatedAt string `json:"created_at"`
		UpdatedAt string `json:"updated_at"`
	}
	r.Data(t, &it)
	if it.CreatedAt == "" || it.CreatedAt != it.UpdatedAt || !strings.HasSuffix(it.CreatedAt, "Z") {
		t.Fatalf("created_at %q, updated_at %q: want equal UTC timestamps", it.CreatedAt, it.UpdatedAt)
	}
}
