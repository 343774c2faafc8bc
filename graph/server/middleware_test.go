package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/graph/server"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// fieldRecorder is a field middleware (a tracer would be one) recording
// every field it is called for, as Type.field.
type fieldRecorder struct {
	mu   sync.Mutex
	seen map[string]int
}

func (*fieldRecorder) ExtensionName() string                   { return "fieldRecorder" }
func (*fieldRecorder) Validate(graphql.ExecutableSchema) error { return nil }
func (r *fieldRecorder) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	r.mu.Lock()
	r.seen[fc.Object+"."+fc.Field.Name]++
	r.mu.Unlock()
	return next(ctx)
}

// TestFieldMiddleware: a field middleware registered with the server
// either sees every field of a page of items (gqlgen's own executor,
// generated with GQLGEN_REWRITE=off, as CI runs this package too), or the
// server refuses to start with one, naming it and the way out (the
// rewritten executor, whose fast paths read fields from their objects
// without it).
func TestFieldMiddleware(t *testing.T) {
	env := testutil.New(t)
	testutil.GQL(t, env, env.Alice.Token, `mutation { a: createItem(input: {name: "a"}) { id } b: createItem(input: {name: "b"}) { id } }`, nil).OK(t)

	rec := &fieldRecorder{seen: map[string]int{}}
	h, refused := func() (h http.Handler, refused any) {
		defer func() { refused = recover() }()
		return server.New(env.App.Service, server.Options{Extensions: []graphql.HandlerExtension{rec}}), nil
	}()
	_, rewritten := generated.NewExecutableSchema(generated.Config{}).(interface{ SerialFastPaths() bool })
	if rewritten {
		msg := fmt.Sprint(refused)
		if refused == nil || !strings.Contains(msg, `"fieldRecorder"`) || !strings.Contains(msg, "GQLGEN_REWRITE=off") {
			t.Fatalf("rewritten executor: New with a field middleware = %v, want a refusal naming it and GQLGEN_REWRITE=off", refused)
		}
		return
	}
	if refused != nil {
		t.Fatalf("gqlgen's own executor: New refused a field middleware: %v", refused)
	}
	body := `{"query":"{ items(first: 10) { edges { node { id name createdAt status owner { name } } } } }"}`
	req := httptest.NewRequest("POST", "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(viewer.NewContext(req.Context(), viewer.Viewer{UserID: env.Alice.UserID, KeyID: env.Alice.KeyID, Role: viewer.RoleUser}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	r := testutil.DecodeGQL(t, &testutil.Response{Status: w.Code, Body: w.Body.Bytes()})
	if got := len(r.OK(t).IDs(t, "items")); got != 2 {
		t.Fatalf("%d items, want 2: %s", got, w.Body)
	}
	for field, n := range map[string]int{
		"Query.items": 1, "ItemConnection.edges": 1, "ItemEdge.node": 2,
		"Item.id": 2, "Item.name": 2, "Item.createdAt": 2, "Item.status": 2, "Item.owner": 2, "User.name": 2,
	} {
		if rec.seen[field] != n {
			t.Errorf("the field middleware saw %s %d times, want %d (saw %v)", field, rec.seen[field], n, rec.seen)
		}
	}
}
