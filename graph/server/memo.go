package server

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/vektah/gqlparser/v2/ast"
)

// opMemo keeps one value per parsed operation for as long as the operation
// is alive: gqlgen's query cache hands every request of the same document
// the same *ast.OperationDefinition, so what depends on the operation alone
// is worked out once rather than on every request. It holds the operations
// weakly; an entry goes when the query cache has let its operation go and
// the garbage collector has taken it. The zero opMemo is ready to use.
type opMemo[V any] struct {
	m sync.Map // uintptr (the operation's address) → *opMemoEntry[V]
}

type opMemoEntry[V any] struct {
	op weak.Pointer[ast.OperationDefinition]
	v  V
}

// Get returns the value kept for op, making it with compute the first time
// (two requests may both compute it; one value is kept). A nil op is not
// kept: Get returns compute().
func (m *opMemo[V]) Get(op *ast.OperationDefinition, compute func() V) V {
	if op == nil {
		return compute()
	}
	key := uintptr(unsafe.Pointer(op))
	old, ok := m.m.Load(key)
	if ok {
		if e := old.(*opMemoEntry[V]); e.op.Value() == op {
			return e.v
		}
		// An operation that has died left its entry at the address op
		// now has, and its cleanup has not run yet.
	}
	e := &opMemoEntry[V]{op: weak.Make(op), v: compute()}
	if ok {
		if !m.m.CompareAndSwap(key, old, e) {
			return e.v // another request replaced it meanwhile
		}
	} else if prev, loaded := m.m.LoadOrStore(key, e); loaded {
		if p := prev.(*opMemoEntry[V]); p.op.Value() == op {
			return p.v
		}
		return e.v
	}
	// The entry is removed when op dies, unless a later operation at the
	// same address has replaced it by then.
	runtime.AddCleanup(op, func(key uintptr) { m.m.CompareAndDelete(key, e) }, key)
	return e.v
}

// len is how many entries m holds (for tests).
func (m *opMemo[V]) len() int {
	n := 0
	m.m.Range(func(any, any) bool { n++; return true })
	return n
}
