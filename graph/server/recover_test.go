package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/itemsvc/graph/server"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// TestPanicIsInternalError: a resolver that panics (here: a server built
// without a service, so the first database access dereferences nil) answers
// INTERNAL_ERROR with a safe message; the panic goes to the log only.
func TestPanicIsInternalError(t *testing.T) {
	var logs bytes.Buffer
	h := server.New(nil, server.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req := httptest.NewRequest("POST", "/graphql", strings.NewReader(`{"query":"{ me { id } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(viewer.NewContext(req.Context(), viewer.Viewer{UserID: "user_x", KeyID: "key_x", Role: viewer.RoleUser}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	var r testutil.GQLResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if rec.Code != http.StatusOK || r.Code() != "INTERNAL_ERROR" || r.Errors[0].Message != "internal error" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "nil pointer") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("internals in the response: %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "graphql panic") || !strings.Contains(logs.String(), "nil pointer") {
		t.Errorf("panic not logged: %s", logs.String())
	}
}
