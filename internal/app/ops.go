package app

import (
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/acme/itemsvc/internal/sandbox"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/rest"
)

// operations wires what an operator needs around the API: the process and
// database pool metrics, readiness on the database, CORS, and the sandbox
// (its header on every response and its reset worker).
func (a *App) operations(o *rest.Options) {
	a.Metrics.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(a.DB.SQL, a.DB.Dialect),
	)
	o.Metrics = a.Metrics
	o.Ready = a.DB.Ready
	o.CORSOrigins = a.Config.CORSOrigins
	o.Sandbox = a.Config.Sandbox
	if a.Config.Sandbox {
		a.Sandbox = sandbox.New(a.DB.Client, a.Logger, a.Config.SandboxResetInterval, a.Keys.Derive(secrets.PurposeSandbox))
		a.workers = append(a.workers, Worker{Name: "sandbox-reset", Run: a.Sandbox.Run})
	}
}
