package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// BenchmarkAuthenticate is the token check of every request: signature,
// expiry and the (cached) state of the token's key.
func BenchmarkAuthenticate(b *testing.B) {
	env := testutil.New(b)
	svc, ctx := env.App.Service, context.Background()
	if _, err := svc.Authenticate(ctx, env.Alice.Token); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Authenticate(ctx, env.Alice.Token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListItems builds and runs the list queries (count and page) of a
// user with 100 items, privacy filter included.
func BenchmarkListItems(b *testing.B) {
	env := testutil.New(b)
	for i := range 100 {
		env.CreateItem(env.Alice, fmt.Sprintf("item %d", i))
	}
	svc := env.App.Service
	ctx := viewer.NewContext(context.Background(), viewer.Viewer{UserID: env.Alice.UserID, KeyID: env.Alice.KeyID, Role: viewer.RoleUser})
	p := service.ListParams{Page: 1, Limit: 20, Sort: "created_at", Desc: true}
	b.ReportAllocs()
	for b.Loop() {
		page, err := svc.ListItems(ctx, p)
		if err != nil || len(page.Items) != 20 || page.Total != 100 {
			b.Fatalf("page of %d of %d: %v", len(page.Items), page.Total, err)
		}
	}
}
