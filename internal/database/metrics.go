package database

import (
	"context"
	"os"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// RegisterMetrics adds the database's gauges to set, read at each scrape:
// itemsvc_database_ready (1 when Ready passes, as /readyz would answer,
// else 0), and on an SQLite file itemsvc_sqlite_wal_bytes, the size of the
// write-ahead log, which grows without bound when checkpoints cannot keep
// up (a long reader, a full disk) and is what an alert watches.
func (d *DB) RegisterMetrics(set *metrics.Set) {
	set.NewGauge("itemsvc_database_ready", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		defer cancel()
		if d.Ready(ctx) != nil {
			return 0
		}
		return 1
	})
	if d.gate != nil {
		d.gate.registerMetrics(set)
	}
	if d.file == "" {
		return
	}
	set.NewGauge("itemsvc_sqlite_wal_bytes", func() float64 {
		fi, err := os.Stat(d.file + "-wal")
		if err != nil {
			return 0 // no log (checkpointed and truncated, or not opened yet)
		}
		return float64(fi.Size())
	})
}

// readyTimeout bounds the scrape's readiness check, as /readyz bounds its.
const readyTimeout = 2 * time.Second
