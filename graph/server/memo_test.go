package server

import (
	"runtime"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestOpMemo: one value per operation, computed once; none kept for a nil
// operation; an operation's entry goes once the operation is collected.
func TestOpMemo(t *testing.T) {
	var m opMemo[int]
	computed := 0
	compute := func() int { computed++; return computed }
	a, b := &ast.OperationDefinition{Name: "a"}, &ast.OperationDefinition{Name: "b"}
	for _, step := range []struct {
		op       *ast.OperationDefinition
		want     int
		computed int
	}{
		{a, 1, 1},
		{a, 1, 1},
		{b, 2, 2},
		{a, 1, 2},
		{nil, 3, 3},
		{nil, 4, 4},
	} {
		if got := m.Get(step.op, compute); got != step.want || computed != step.computed {
			t.Fatalf("Get(%v) = %d after %d computations, want %d after %d", step.op, got, computed, step.want, step.computed)
		}
	}
	if n := m.len(); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	runtime.KeepAlive(b)
	a, b = nil, nil
	for i := 0; m.len() > 0 && i < 100; i++ {
		runtime.GC() // the cleanups run after a collection, on their own goroutine
		runtime.Gosched()
	}
	if n := m.len(); n != 0 {
		t.Errorf("%d entries left after their operations were collected", n)
	}
}
