package serial

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// TestMarshalSlice: each element sees its own index, in order; a panic
// nulls the list and reports one error, as MarshalSliceConcurrently does.
func TestMarshalSlice(t *testing.T) {
	for _, tc := range []struct {
		name       string
		length     int
		panicAt    int // -1: none
		omitPanics bool
		wantNil    bool
		wantErrs   int
	}{
		{"empty", 0, -1, false, false, 0},
		{"one", 1, -1, false, false, 0},
		{"twenty", 20, -1, false, false, 0},
		{"a panic nulls the list", 5, 2, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
			ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{})
			var seen []int
			ret := MarshalSlice(ctx, tc.length, 0, tc.omitPanics, func(ctx context.Context, i int) graphql.Marshaler {
				if got := *graphql.GetFieldContext(ctx).Index; got != i {
					t.Errorf("element %d sees index %d", i, got)
				}
				seen = append(seen, i)
				if i == tc.panicAt {
					panic("boom")
				}
				return graphql.MarshalInt(i)
			})
			if (ret == nil) != tc.wantNil {
				t.Fatalf("nil list = %v, want %v", ret == nil, tc.wantNil)
			}
			if !tc.wantNil && len(ret) != tc.length {
				t.Fatalf("%d elements, want %d", len(ret), tc.length)
			}
			for i, v := range seen {
				if v != i {
					t.Fatalf("elements marshalled in order %v", seen)
				}
			}
			if errs := graphql.GetErrors(ctx); len(errs) != tc.wantErrs {
				t.Errorf("errors %v, want %d", errs, tc.wantErrs)
			}
		})
	}
}
