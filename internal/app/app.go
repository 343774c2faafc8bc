// Package app wires the server from its configuration: database, service,
// router. The binary, the tests and the benchmark all build it here, so what
// is tested is what runs.
package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/VictoriaMetrics/metrics"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	gqlserver "github.com/acme/itemsvc/graph/server"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/migration"
	"github.com/acme/itemsvc/internal/ratelimit"
	"github.com/acme/itemsvc/internal/retention"
	"github.com/acme/itemsvc/internal/sandbox"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/tracing"
	"github.com/acme/itemsvc/internal/webhook"
	"github.com/acme/itemsvc/rest"
)

// App is a wired server.
type App struct {
	Config  config.Config
	DB      *database.DB
	Service *service.Service
	Handler http.Handler
	// Streams are the event streams Handler took over from net/http: the
	// server calls Streams.Shutdown after its own.
	Streams *rest.Streams
	Logger  *slog.Logger
	// Metrics is the set behind /metrics; every component makes its series
	// here (never in the library's global default set).
	Metrics *metrics.Set
	// Sandbox seeds and resets the demo data; nil unless SANDBOX=true.
	Sandbox *sandbox.Sandbox
	// Webhooks is the webhook dispatcher, run as a worker by Start.
	Webhooks *webhook.Dispatcher
	// Events is the event feed's hub, run as a worker by Start.
	Events *events.Hub
	// Retention prunes the event history (EVENT_RETENTION), run as a
	// worker by Start; tests call its Prune.
	Retention *retention.Pruner
	// Keys is the server secret (SECRET_KEY or its key file); SigningKey
	// the token signing key derived from it (or JWT_SECRET).
	Keys       *secrets.Keys
	SigningKey []byte

	workers []Worker
	redis   *redis.Client // the event relay's, when REDIS_URL is set
	limits  *ratelimit.Limits
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Idempotency keys (DESIGN §7): how often the expired are pruned, and how
// long past REQUEST_TIMEOUT a claim still running is trusted (a request's
// commit may finish a little after its deadline).
const (
	idempotencyPruneEvery     = 10 * time.Minute
	idempotencyTakeoverMargin = 30 * time.Second
)

// Worker is a background task of the server (webhook dispatch, sandbox
// reset): it runs until its context is cancelled.
type Worker struct {
	Name string
	Run  func(ctx context.Context)
}

// Options adjust wiring for tests; the zero value is production.
type Options struct {
	Service service.Options
	// RateLimitPrefix namespaces rate-limit counters in Redis (default
	// ratelimit.DefaultPrefix); tests sharing one Redis each take their own.
	RateLimitPrefix string
	// WrapDriver, when set, wraps the database driver under the ent client
	// (tests count statements with it).
	WrapDriver func(dialect.Driver) dialect.Driver
	// EventPoll is how often the event tailer reads the outbox when nothing
	// wakes it (default 1s); tests of the wake-ups make it long.
	EventPoll time.Duration
	// Webhooks tunes the webhook dispatcher (clock, timeouts, transport)
	// and the resolver of its address guard.
	Webhooks webhook.Options
	// WebSocketInitTimeout is how long a GraphQL WebSocket may wait for
	// connection_init (default 10s); tests of the timeout shorten it.
	WebSocketInitTimeout time.Duration
	// KeepAlive is how often GraphQL's idle event streams and sockets are
	// pinged (default 15s); tests shorten it.
	KeepAlive time.Duration
	// Retention tunes the event history's pruner (its clock, batch size);
	// its Window.Retention is EVENT_RETENTION's.
	Retention retention.Options
	// Tracing, when set, traces every request, SQL statement and webhook
	// delivery (serve builds it from the OTEL_* variables); nil installs
	// nothing of it.
	Tracing *tracing.Tracing
}

// New opens and migrates the database and builds the service and router.
func New(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*App, error) {
	keys, err := serverKeys(cfg)
	if err != nil {
		return nil, err
	}
	var open database.Opener
	if opts.Tracing != nil {
		open = opts.Tracing.SQLOpener(dbSystem(cfg.DatabaseURL))
	}
	db, err := database.OpenVia(ctx, cfg.DatabaseURL, cfg.DatabaseMaxConns, open)
	if err != nil {
		return nil, err
	}
	db.SetBatchWindow(cfg.DatabaseBatchWindow)
	if opts.WrapDriver != nil {
		db.WrapDriver(opts.WrapDriver)
	}
	a, err := build(ctx, cfg, log, db, keys, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

func build(ctx context.Context, cfg config.Config, log *slog.Logger, db *database.DB, keys *secrets.Keys, opts Options) (*App, error) {
	var err error
	if cfg.MigrateOnStart {
		applied, err := db.Migrate(ctx)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		if applied > 0 {
			log.InfoContext(ctx, "applied migrations", "count", applied, "dialect", db.Dialect)
		}
	} else if pending, err := migration.Pending(ctx, db.SQL, db.Dialect); err != nil {
		return nil, fmt.Errorf("check migrations: %w", err)
	} else if pending > 0 {
		return nil, fmt.Errorf("the database lacks %d migration(s) and MIGRATE_ON_START is false: run `server migrate` first (the migration job)", pending)
	}
	signing := keys.Derive(secrets.PurposeTokens)
	if cfg.JWTSecret != "" {
		signing = []byte(cfg.JWTSecret)
	}
	if err := auth.DropStoredSecrets(ctx, db.Client); err != nil {
		return nil, err
	}
	a := &App{Config: cfg, DB: db, Logger: log, Metrics: metrics.NewSet(), Keys: keys, SigningKey: signing}
	db.RegisterMetrics(a.Metrics)

	// Rate limits (DESIGN §3): per API key and per client address for
	// failed logins, in memory or in Redis when REDIS_URL is set.
	a.limits, err = ratelimit.Open(ctx, ratelimit.Config{
		PerMinute:              cfg.RateLimitPerMinute,
		PerHour:                cfg.RateLimitPerHour,
		LoginFailuresPerMinute: cfg.LoginFailuresPerMin,
		AnonymousPerMinute:     cfg.GraphQLAnonPerMinute,
		RedisURL:               cfg.RedisURL,
		Prefix:                 opts.RateLimitPrefix,
		Logger:                 log,
		Metrics:                a.Metrics,
	})
	if err != nil {
		return nil, err
	}

	sopts := opts.Service
	sopts.Logger = log
	sopts.LoginLimiter = a.limits.Logins
	if cfg.Sandbox && sopts.KeyPrefix == "" {
		sopts.KeyPrefix = auth.TestPrefix
	}
	// Webhooks: the guard checks receiver URLs at registration and at dial
	// time; every committed item change wakes the dispatcher.
	guard := webhook.NewGuard(cfg.WebhookAllowPrivate, opts.Webhooks.Lookup)
	wopts := opts.Webhooks
	wopts.Schedule = cfg.WebhookRetrySchedule
	wopts.Logger = log
	wopts.Secrets = keys.Box(secrets.PurposeWebhooks)
	wopts.Metrics = a.Metrics
	if opts.Tracing != nil {
		// Each attempt is a client span; its receiver gets traceparent.
		base := wopts.Transport
		if base == nil {
			base = guard.Transport()
		}
		wopts.Transport = opts.Tracing.Transport(base)
		wopts.Tracer = opts.Tracing.Tracer()
	}
	dispatcher := webhook.New(db.Client, db.Dialect, guard, wopts)
	sopts.WebhookGuard = guard
	if next := sopts.OnCommit; next != nil {
		sopts.OnCommit = func() { dispatcher.Notify(); next() }
	} else {
		sopts.OnCommit = dispatcher.Notify
	}

	// Event feeds (DESIGN §7): one tailer per process, woken by local
	// commits, by other replicas (wake.go) and by a slow poll.
	relay, err := a.eventRelay(cfg, db)
	if err != nil {
		return nil, err
	}
	hub := events.New(db.Client, events.Options{
		PollInterval: opts.EventPoll,
		QueryTimeout: cfg.RequestTimeout,
		PerKey:       cfg.EventStreamsPerKey,
		Buffer:       cfg.EventStreamBuffer,
		// 0 in the configuration writes each batch at once.
		FlushInterval: cmp.Or(cfg.EventFlushInterval, -1),
		Relay:         relay,
		Logger:        log,
		Metrics:       a.Metrics,
		Concurrent:    db.Dialect == "postgres",
	})
	sopts.Events = hub
	prev := sopts.OnCommit
	sopts.OnCommit = func() { hub.Committed(); prev() }

	// Event history (DESIGN §7): pruned past EVENT_RETENTION, except what
	// an endpoint is still owed; the feeds refuse older cursors.
	pruneOpts := opts.Retention
	pruneOpts.Window.Retention = cfg.EventRetention
	pruneOpts.AuditRetention = cfg.AuditRetention
	pruneOpts.Logger = log
	pruneOpts.Metrics = a.Metrics
	pruner := retention.New(db.Client, db.Dialect, pruneOpts)
	sopts.EventWindow = pruner.Window()

	sopts.SecretBox = keys.Box(secrets.PurposeWebhooks)
	// A replayed response is sealed with the webhook box: the response to
	// a webhook's creation holds its secret.
	sopts.IdempotencyTTL = cfg.IdempotencyKeyTTL
	sopts.MaxKeysPerUser = cmp.Or(cfg.MaxKeysPerUser, -1) // 0: no cap
	sopts.Dialect = db.Dialect
	// A claim older than any request that could still commit belongs to a
	// request that died with its server (idempotency.go).
	sopts.IdempotencyTakeover = cfg.RequestTimeout + idempotencyTakeoverMargin
	sopts.Backups = backupOptions(cfg)
	svc := service.New(db.Client, auth.NewTokens(signing, cfg.TokenTTL), sopts)
	// What the unexpired Idempotency-Key records keep for replays (at most
	// service.MaxIdempotentRecord each); -1 when the database did not
	// answer.
	a.Metrics.NewGauge("itemsvc_idempotency_stored_bytes", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := svc.StoredReplayBytes(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	if n, err := svc.SealWebhookSecrets(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.InfoContext(ctx, "sealed webhook signing secrets stored in plaintext or in the first format", "count", n)
	}
	if err := checkWebhookSecrets(ctx, svc, log); err != nil {
		return nil, err
	}
	a.Service = svc
	a.Webhooks = dispatcher
	a.workers = append(a.workers, Worker{Name: "webhooks", Run: dispatcher.Run}, Worker{Name: "events", Run: hub.Run})
	a.Events = hub
	a.workers = append(a.workers, Worker{Name: "retention", Run: pruner.Run})
	// Idempotency keys (DESIGN §7) past IDEMPOTENCY_KEY_TTL.
	a.workers = append(a.workers, Worker{Name: "idempotency-keys", Run: func(ctx context.Context) {
		svc.RunIdempotencyPruner(ctx, idempotencyPruneEvery)
	}})
	a.Retention = pruner

	a.Streams = new(rest.Streams)
	ropts := rest.Options{
		Streams:        a.Streams,
		Logger:         log,
		RateLimit:      rest.RateLimit(a.limits.Keys),
		RequestTimeout: cfg.RequestTimeout,
		StreamRoutes:   []string{gqlserver.Endpoint},
		TrustedProxies: cfg.TrustedProxies,
		Mount: func(e *gin.Engine, _ ...gin.HandlerFunc) {
			// GraphQL (DESIGN §5, §7): same engine, token, service; the
			// rate limit charges each operation's points once it is
			// priced, to the key or, without a token, to the address.
			var tracer trace.Tracer
			if opts.Tracing != nil && opts.Tracing.Sampling() { // otherwise every operation span would be dropped
				tracer = opts.Tracing.Tracer()
			}
			gql := gqlserver.New(svc, gqlserver.Options{
				MaxDepth:               cfg.GraphQLMaxDepth,
				MaxComplexity:          cfg.GraphQLMaxComplexity,
				AnonymousIntrospection: cfg.Playground,
				WebSocketOrigins:       originHosts(cfg.CORSOrigins),
				WebSocketInitTimeout:   opts.WebSocketInitTimeout,
				KeepAlive:              opts.KeepAlive,
				RequestTimeout:         cfg.RequestTimeout,
				Logger:                 log,
				Tracer:                 tracer,
			})
			gqlserver.Mount(e, gql, gqlserver.MountOptions{
				Playground:   cfg.Playground,
				Authenticate: rest.Authenticate(svc),
				Keys:         a.limits.Keys,
				Anonymous:    a.limits.Anonymous,
				Idempotency:  gqlserver.Idempotency(svc),
			})
		},
	}
	if opts.Tracing != nil {
		ropts.Tracing = opts.Tracing.Middleware()
	}
	a.operations(&ropts) // ops.go: metrics, readiness, CORS, sandbox
	a.Handler = rest.NewRouter(svc, ropts)
	return a, nil
}

// Start runs the background workers until Close.
func (a *App) Start(ctx context.Context) {
	ctx, a.cancel = context.WithCancel(ctx)
	for _, w := range a.workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.Logger.DebugContext(ctx, "worker started", "worker", w.Name)
			w.Run(ctx)
		}()
	}
}

// Close stops the workers, waits for them, and releases the database.
func (a *App) Close() error {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	if a.Service != nil {
		a.Service.Wait() // its background writes, before the pool closes
	}
	if a.redis != nil {
		_ = a.redis.Close()
	}
	if a.limits != nil {
		if err := a.limits.Close(); err != nil {
			a.Logger.Warn("close rate-limit store", "err", err)
		}
	}
	return a.DB.Close()
}

// KeyFile is the key file a server on databaseURL makes and reads when
// SECRET_KEY is empty (serverKeys), or "" when it has none (PostgreSQL, an
// in-memory database).
func KeyFile(databaseURL string) string {
	dialect, path, err := config.ParseDatabaseURL(databaseURL)
	if err != nil || dialect != "sqlite" || path == ":memory:" {
		return ""
	}
	return path + ".key"
}

// backupOptions place the backups admins make through the API: BACKUP_DIR,
// or backups/ beside the SQLite database, and its key file when it has one
// (no SECRET_KEY), copied beside each as `server backup` copies it. An
// in-memory or PostgreSQL database has none (the service refuses them).
func backupOptions(cfg config.Config) service.BackupOptions {
	o := service.BackupOptions{DatabaseURL: cfg.DatabaseURL, Keep: cfg.BackupKeep}
	dialect, path, err := config.ParseDatabaseURL(cfg.DatabaseURL)
	if err != nil || dialect != "sqlite" || path == ":memory:" {
		return o
	}
	o.Dir = cmp.Or(cfg.BackupDir, filepath.Join(filepath.Dir(path), "backups"))
	if cfg.SecretKey == "" {
		o.KeyFile = KeyFile(cfg.DatabaseURL)
	}
	return o
}

// dbSystem is OpenTelemetry's name of the database system DATABASE_URL
// names (db.system.name).
func dbSystem(databaseURL string) string {
	if d, _, _ := config.ParseDatabaseURL(databaseURL); d == "postgres" {
		return "postgresql"
	}
	return "sqlite"
}

// originHosts are the hosts of CORS_ORIGINS, the patterns a browser page's
// WebSocket origin is checked against ("*": any).
func originHosts(origins []string) []string {
	var hosts []string
	for _, o := range origins {
		if o == "*" {
			return []string{"*"}
		}
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			hosts = append(hosts, u.Host)
		}
	}
	return hosts
}

// eventRelay picks how event wake-ups reach the other replicas: Redis
// pub/sub when REDIS_URL is set, else PostgreSQL LISTEN/NOTIFY; on SQLite,
// none (one process writes, and wakes its own tailer).
func (a *App) eventRelay(cfg config.Config, db *database.DB) (events.Relay, error) {
	if cfg.RedisURL != "" {
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		a.redis = redis.NewClient(opt)
		return events.RedisRelay{Client: a.redis}, nil
	}
	if db.Dialect != "postgres" {
		return nil, nil
	}
	_, dsn, err := config.ParseDatabaseURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	return events.PostgresRelay{DB: db.SQL, DSN: dsn}, nil
}
