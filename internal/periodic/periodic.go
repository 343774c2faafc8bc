// Package periodic runs the server's upkeep (pruning what has expired) at
// start and then at a steady pace, until the server stops.
package periodic

import (
	"context"
	"time"
)

// Run calls f at once, then again every interval after each call returns,
// until ctx ends. The interval counts from the end of a call, so a long pass
// delays the next one instead of calls piling up behind it.
func Run(ctx context.Context, every time.Duration, f func(context.Context)) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ctx.Err() != nil {
			return // both were ready: the end wins
		}
		f(ctx)
		t.Reset(every)
	}
}
