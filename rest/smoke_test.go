package rest_test

import (
	"testing"

	"github.com/acme/itemsvc/internal/testutil"
)

func TestSmoke(t *testing.T) {
	env := testutil.New(t)
	id := env.CreateItem(env.Alice, "x")
	r := env.Do(testutil.Request{Method: "GET", Path: "/v1/items/" + id, Token: env.Alice.Token})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
