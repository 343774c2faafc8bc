package rest

import "github.com/gin-gonic/gin"

// requestStack is the goroutine stack a request needs: the list and the
// GraphQL page (middleware, gqlgen's executor, ent, then SQLite's driver,
// whose translated C functions have large frames) go deeper than half of
// it, and in CPU profiles of make bench nothing grows below it. A request
// that needs more grows once more, as it would have anyway.
const requestStack = 32 << 10

// presizeStack grows the stack of a request's goroutine to requestStack
// before the request runs, except for streams, which wait most of their
// life and need little.
//
// The stack of a connection's goroutine shrinks by half at a garbage
// collection that finds it idle between requests, which under load is
// most of them, and it then grows again during the next request. Left to
// itself the stack grows where it overflows, deep in SQLite's driver, and
// each growth copies and adjusts every frame above: with some hundred
// frames that was a visible share of a GraphQL request's CPU (copystack in
// the profiles of make bench -profile). Grown here, at a depth of a few
// frames, the copy is cheap and nothing below grows again.
func presizeStack(streams []string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !streaming(c, streams) {
			growStack()
		}
		c.Next()
	}
}

// growStack has a frame of requestStack bytes, which makes the runtime
// grow the stack to at least that much when it is smaller.
//
//go:noinline
func growStack() {
	var frame [requestStack]byte
	keep(frame[:])
}

// keep is a call the compiler cannot see through, so that growStack's
// frame is not optimised away.
//
//go:noinline
func keep([]byte) {}
