package retention

import (
	"context"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
)

// metrics are the pruner's series.
type metrics struct {
	events, deliveries, attempts, audit *vm.Counter
	failures                            *vm.Counter
}

// newMetrics makes the series in set (nil: not exported). The age of the
// oldest event is read from the database at scrape time, so every replica
// reports the same truth.
func newMetrics(set *vm.Set, client *ent.Client, w Window) *metrics {
	exported := set != nil
	if !exported {
		set = vm.NewSet()
	}
	pruned := func(table string) *vm.Counter {
		return set.NewCounter(`itemsvc_retention_pruned_rows_total{table="` + table + `"}`)
	}
	m := &metrics{
		// Rows deleted by the retention job, by table.
		events:     pruned("events"),
		deliveries: pruned("deliveries"),
		attempts:   pruned("delivery_attempts"),
		audit:      pruned("audit_events"),
		// Retention passes that stopped on an error (retried at the next).
		failures: set.NewCounter("itemsvc_retention_failures_total"),
	}
	if !exported {
		return m
	}
	// Age of the oldest event kept, in seconds: about EVENT_RETENTION in a
	// steady state, more while an endpoint is still owed an older event;
	// 0 with no event, -1 when the database did not answer.
	set.NewGauge("itemsvc_event_oldest_age_seconds", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ids, err := client.Event.Query().Order(event.ByID()).Limit(1).IDs(privacy.DecisionContext(ctx, privacy.Allow))
		switch {
		case err != nil:
			return -1
		case len(ids) == 0:
			return 0
		}
		ms, ok := idTime(ids[0])
		if !ok {
			return -1
		}
		now := time.Now
		if w.Now != nil {
			now = w.Now
		}
		return max(now().Sub(time.UnixMilli(int64(ms))).Seconds(), 0)
	})
	return m
}
