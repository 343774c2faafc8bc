package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTake measures what the limiter adds to one authenticated request
// (two windows: minute and hour), on each store; run with TEST_REDIS_URL
// for Redis. Keys rotate over 1000 ids with limits that are never reached,
// so every iteration is an accepted request.
func BenchmarkTake(b *testing.B) {
	for name, store := range testStores(b) {
		l, _ := testLimiter(b, store,
			Window{Name: "minute", Limit: 1 << 40, Period: time.Minute},
			Window{Name: "hour", Limit: 1 << 40, Period: time.Hour})
		ids := make([]string, 1000)
		for i := range ids {
			ids[i] = "key_bench_" + strconv.Itoa(i)
		}
		ctx := context.Background()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if d := l.Take(ctx, ids[i%len(ids)], nil); !d.Allowed || !d.Checked {
					b.Fatalf("refused or unchecked: %+v", d)
				}
				i++
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if d := l.Take(ctx, ids[i%len(ids)], nil); !d.Allowed || !d.Checked {
						b.Errorf("refused or unchecked: %+v", d)
						return
					}
					i++
				}
			})
		})
	}
}
