package app

import (
	"database/sql"
	"fmt"
	"io"

	"github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/internal/sandbox"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/rest"
)

// operations wires what an operator needs around the API: the process and
// database pool metrics, readiness on the database, CORS, and the sandbox
// (its header on every response and its reset worker).
func (a *App) operations(o *rest.Options) {
	// TYPE lines let scrapers tell counters from gauges.
	metrics.ExposeMetadata(true)
	a.Metrics.RegisterMetricsWriter(metrics.WriteProcessMetrics) // go_*, process_*
	a.Metrics.RegisterMetricsWriter(poolMetrics(a.DB.SQL, a.DB.Dialect))
	o.Metrics = a.Metrics
	o.Ready = a.DB.Ready
	o.CORSOrigins = a.Config.CORSOrigins
	o.Sandbox = a.Config.Sandbox
	if a.Config.Sandbox {
		a.Sandbox = sandbox.New(a.DB.Client, a.Logger, a.Config.SandboxResetInterval, a.Keys.Derive(secrets.PurposeSandbox))
		a.workers = append(a.workers, Worker{Name: "sandbox-reset", Run: a.Sandbox.Run})
	}
}

// poolMetrics writes the database pool's statistics under the names the
// Prometheus Go client gives them (go_sql_*), labelled by dialect.
func poolMetrics(db *sql.DB, dialect string) func(io.Writer) {
	label := fmt.Sprintf("{db_name=%q}", dialect)
	return func(w io.Writer) {
		s := db.Stats()
		for _, g := range []struct {
			name  string
			value int
		}{
			{"go_sql_max_open_connections", s.MaxOpenConnections},
			{"go_sql_open_connections", s.OpenConnections},
			{"go_sql_in_use_connections", s.InUse},
			{"go_sql_idle_connections", s.Idle},
		} {
			metrics.WriteGaugeUint64(w, g.name+label, uint64(g.value))
		}
		metrics.WriteCounterUint64(w, "go_sql_wait_count_total"+label, uint64(s.WaitCount))
		metrics.WriteCounterFloat64(w, "go_sql_wait_duration_seconds_total"+label, s.WaitDuration.Seconds())
		metrics.WriteCounterUint64(w, "go_sql_max_idle_closed_total"+label, uint64(s.MaxIdleClosed))
		metrics.WriteCounterUint64(w, "go_sql_max_idle_time_closed_total"+label, uint64(s.MaxIdleTimeClosed))
		metrics.WriteCounterUint64(w, "go_sql_max_lifetime_closed_total"+label, uint64(s.MaxLifetimeClosed))
	}
}
