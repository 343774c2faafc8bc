// Package config is the server's configuration: one struct, loaded once from
// flags and environment variables (a flag wins over its variable), and
// validated at start with a clear message for each bad value.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/acme/itemsvc/internal/secrets"
)

// Config holds every setting of the server (DESIGN §6).
type Config struct {
	Addr                 string
	DatabaseURL          string
	DatabaseMaxConns     int
	DatabaseBatchWindow  time.Duration
	RedisURL             string
	JWTSecret            string
	SecretKey            string
	TokenTTL             time.Duration
	RateLimitPerMinute   int
	RateLimitPerHour     int
	LoginFailuresPerMin  int
	MaxKeysPerUser       int
	TrustedProxies       []string
	WebhookRetrySchedule []time.Duration
	WebhookAllowPrivate  bool
	TLSCertFile          string
	TLSKeyFile           string
	Playground           bool
	GraphQLMaxDepth      int
	GraphQLMaxComplexity int
	GraphQLAnonPerMinute int
	RequestTimeout       time.Duration
	EventStreamsPerKey   int
	EventStreamBuffer    int
	EventRetention       time.Duration
	AuditRetention       time.Duration
	BackupDir            string
	BackupKeep           int
	EventFlushInterval   time.Duration
	IdempotencyKeyTTL    time.Duration
	CORSOrigins          []string
	LogLevel             slog.Level
	Sandbox              bool
	SandboxResetInterval time.Duration
	ShutdownTimeout      time.Duration
	MigrateOnStart       bool
	// BootstrapAdminEmail and BootstrapAdminKeyFile declare the first
	// admin of an empty database (a cluster's Secret), instead of
	// admin@localhost and a key printed once.
	BootstrapAdminEmail   string
	BootstrapAdminKeyFile string
}

// MinEventRetention is the shortest EVENT_RETENTION: a client must have a
// moment to resume a stream that dropped, and pruning runs every few
// minutes anyway.
const MinEventRetention = time.Minute

// MinAuditRetention is the shortest AUDIT_RETENTION but 0 (forever), as
// for EVENT_RETENTION: the pruning pass runs every few minutes anyway.
const MinAuditRetention = time.Minute

// setting is one configurable value: its flag, its variable and its parser.
type setting struct {
	flag, env, def, usage string
	set                   func(string) error
}

// Register declares every setting on fs, writing into c. Call Resolve after
// fs.Parse to apply environment variables and defaults and to validate.
func (c *Config) Register(fs *flag.FlagSet) *Loader {
	l := &Loader{fs: fs, cfg: c}
	l.add("addr", "ADDR", ":8080", "address to listen on", str(&c.Addr))
	l.add("database-url", "DATABASE_URL", "sqlite:data/app.db", "database: sqlite:PATH, sqlite::memory: or postgres://…", str(&c.DatabaseURL))
	l.add("database-max-conns", "DATABASE_MAX_CONNS", "20", "PostgreSQL connections this server may hold open (docs/configuration.md sizes it); SQLite sizes its own pool", positive(&c.DatabaseMaxConns))
	l.add("database-batch-window", "DATABASE_BATCH_WINDOW", "5ms", "SQLite: longest the writes queued behind one another share one transaction and commit (group commit); a lone write commits at once (0: each write commits alone)", nonNegativeDuration(&c.DatabaseBatchWindow))
	l.add("redis-url", "REDIS_URL", "", "Redis for rate-limit counters shared by replicas (redis://…); empty: in memory", str(&c.RedisURL))
	l.add("secret-key", "SECRET_KEY", "", "server secret (32+ random bytes, the same on every replica: openssl rand -hex 32; a placeholder or a guessable value is refused): derives the token signing key, encrypts webhook secrets; empty: a 0600 key file beside the SQLite database (required with PostgreSQL)", str(&c.SecretKey))
	l.add("jwt-secret", "JWT_SECRET", "", "token signing secret (32+ random bytes, held to the rule of SECRET_KEY); empty: derived from SECRET_KEY", str(&c.JWTSecret))
	l.add("token-ttl", "TOKEN_TTL", "1h", "access token lifetime", duration(&c.TokenTTL))
	l.add("rate-limit-per-minute", "RATE_LIMIT_PER_MINUTE", "100", "requests per minute per API key", positive(&c.RateLimitPerMinute))
	l.add("rate-limit-per-hour", "RATE_LIMIT_PER_HOUR", "1000", "requests per hour per API key", positive(&c.RateLimitPerHour))
	l.add("login-failures-per-minute", "LOGIN_FAILURES_PER_MINUTE", "20", "failed logins per minute per client address", positive(&c.LoginFailuresPerMin))
	l.add("max-keys-per-user", "MAX_KEYS_PER_USER", "20", "active API keys (neither revoked nor expired) one user may hold: the API refuses to make another past it; the operator's server keys create still may (0: no cap)", nonNegative(&c.MaxKeysPerUser))
	l.add("trusted-proxies", "TRUSTED_PROXIES", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed", list(&c.TrustedProxies))
	l.add("webhook-retry-schedule", "WEBHOOK_RETRY_SCHEDULE", "5s,5m,30m,2h,5h,10h,14h,20h,24h", "comma-separated delays between webhook attempts", durations(&c.WebhookRetrySchedule))
	l.add("webhook-allow-private", "WEBHOOK_ALLOW_PRIVATE", "false", "allow webhook URLs on loopback and private networks", boolean(&c.WebhookAllowPrivate))
	l.add("tls-cert-file", "TLS_CERT_FILE", "", "TLS certificate (PEM); with -tls-key-file serves HTTPS", str(&c.TLSCertFile))
	l.add("tls-key-file", "TLS_KEY_FILE", "", "TLS private key (PEM)", str(&c.TLSKeyFile))
	l.add("playground", "PLAYGROUND", "true", "serve the GraphiQL playground at /playground", boolean(&c.Playground))
	l.add("graphql-max-depth", "GRAPHQL_MAX_DEPTH", "10", "deepest GraphQL query accepted", positive(&c.GraphQLMaxDepth))
	l.add("graphql-max-complexity", "GRAPHQL_MAX_COMPLEXITY", "1000", "most complex GraphQL query accepted", positive(&c.GraphQLMaxComplexity))
	l.add("graphql-anonymous-per-minute", "GRAPHQL_ANONYMOUS_PER_MINUTE", "30", "GraphQL points per minute per client address without a token (login, introspection)", positive(&c.GraphQLAnonPerMinute))
	l.add("request-timeout", "REQUEST_TIMEOUT", "5s", "longest a request may work (database included) before it fails with 503", duration(&c.RequestTimeout))
	l.add("event-streams-per-key", "EVENT_STREAMS_PER_KEY", "10", "event streams (SSE, GraphQL subscriptions) one API key may hold open on one server", positive(&c.EventStreamsPerKey))
	l.add("event-stream-buffer", "EVENT_STREAM_BUFFER", "2048", "events that may wait for one stream before it is closed with SLOW_CONSUMER", positive(&c.EventStreamBuffer))
	l.add("event-retention", "EVENT_RETENTION", "720h", "how long events (and their finished webhook deliveries) are kept; older ones are pruned, except events still owed to an endpoint, and an older cursor is 410 CURSOR_EXPIRED", duration(&c.EventRetention))
	l.add("audit-retention", "AUDIT_RETENTION", "8760h", "how long audit records (GET /v1/audit) are kept; older ones are pruned (0: forever)", nonNegativeDuration(&c.AuditRetention))
	l.add("backup-dir", "BACKUP_DIR", "", "folder of the backups admins make through the API (POST /v1/backups); empty: backups/ beside the SQLite database", str(&c.BackupDir))
	l.add("backup-keep", "BACKUP_KEEP", "7", "how many of the backups made through the API are kept; older ones are removed after each new one (0: all)", nonNegative(&c.BackupKeep))
	l.add("event-flush-interval", "EVENT_FLUSH_INTERVAL", "20ms", "shortest time between two writes to one event stream: the events of a busy stream go out together (0: each as soon as it is ready)", nonNegativeDuration(&c.EventFlushInterval))
	l.add("idempotency-key-ttl", "IDEMPOTENCY_KEY_TTL", "24h", "how long an Idempotency-Key and the response it replays are kept (per user); after it the key may be used afresh", duration(&c.IdempotencyKeyTTL))
	l.add("cors-origins", "CORS_ORIGINS", "", "comma-separated origins allowed by CORS (* for any); empty: none", list(&c.CORSOrigins))
	l.add("log-level", "LOG_LEVEL", "info", "debug, info, warn or error", level(&c.LogLevel))
	l.add("sandbox", "SANDBOX", "false", "seed demo data with sk_test_ keys and reset it periodically", boolean(&c.Sandbox))
	l.add("sandbox-reset-interval", "SANDBOX_RESET_INTERVAL", "24h", "how often the sandbox returns to its seed", duration(&c.SandboxResetInterval))
	l.add("migrate-on-start", "MIGRATE_ON_START", "true", "apply pending migrations when the server starts; false: refuse to start until `server migrate` has applied them (replicas beside a migration job)", boolean(&c.MigrateOnStart))
	l.add("bootstrap-admin-email", "BOOTSTRAP_ADMIN_EMAIL", "", "on the first start of an empty database, make the first admin with this email and the key of BOOTSTRAP_ADMIN_KEY_FILE (nothing printed); empty: admin@localhost with a key printed once", str(&c.BootstrapAdminEmail))
	l.add("bootstrap-admin-key-file", "BOOTSTRAP_ADMIN_KEY_FILE", "", "file holding the first admin's API key (sk_live_ and 32 lowercase letters or digits), e.g. a mounted Secret; with BOOTSTRAP_ADMIN_EMAIL", str(&c.BootstrapAdminKeyFile))
	l.add("shutdown-timeout", "SHUTDOWN_TIMEOUT", "20s", "how long in-flight requests may finish after SIGTERM", duration(&c.ShutdownTimeout))
	return l
}

// Variables are the names of the environment variables the configuration
// reads, in the order of Register.
func Variables() []string {
	var c Config
	l := c.Register(flag.NewFlagSet("variables", flag.ContinueOnError))
	names := make([]string, len(l.settings))
	for i, s := range l.settings {
		names[i] = s.env
	}
	return names
}

// Loader applies environment variables and defaults after flag parsing.
type Loader struct {
	fs       *flag.FlagSet
	cfg      *Config
	settings []setting
}

type value struct{ set func(string) error }

func (v value) String() string     { return "" }
func (v value) Set(s string) error { return v.set(s) }

func (l *Loader) add(name, env, def, usage string, set func(string) error) {
	l.settings = append(l.settings, setting{flag: name, env: env, def: def, usage: usage, set: set})
	l.fs.Var(value{set}, name, fmt.Sprintf("%s (env %s, default %q)", usage, env, def))
}

// Resolve fills every setting not given as a flag from its environment
// variable, or else its default, then validates the whole. lookup is
// os.LookupEnv in production.
func (l *Loader) Resolve(lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	l.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	for _, s := range l.settings {
		if given[s.flag] {
			continue
		}
		v, src := s.def, "default of "+s.env
		if env, ok := lookup(s.env); ok {
			v, src = env, s.env
		}
		if err := s.set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return l.cfg.validate()
}

func (c *Config) validate() error {
	var errs []error
	if _, _, err := ParseDatabaseURL(c.DatabaseURL); err != nil {
		errs = append(errs, fmt.Errorf("DATABASE_URL: %w", err))
	}
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			errs = append(errs, errors.New("REDIS_URL: want redis://host:port[/db] or rediss://…"))
		}
	}
	for _, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: want IP addresses or CIDRs, got %q", p))
			}
		}
	}
	// Either secret signs tokens: one that can be guessed (a placeholder, a
	// phrase, a pattern) makes anyone an admin.
	for _, s := range []struct{ name, value string }{{"JWT_SECRET", c.JWTSecret}, {"SECRET_KEY", c.SecretKey}} {
		if s.value != "" {
			if err := secrets.Check(s.value); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			}
		}
	}
	if c.TokenTTL < time.Second {
		errs = append(errs, errors.New("TOKEN_TTL: want at least 1s"))
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		errs = append(errs, errors.New("TLS_CERT_FILE and TLS_KEY_FILE: set both or neither"))
	}
	if len(c.WebhookRetrySchedule) == 0 {
		errs = append(errs, errors.New("WEBHOOK_RETRY_SCHEDULE: want at least one delay"))
	}
	if c.EventRetention < MinEventRetention {
		errs = append(errs, fmt.Errorf("EVENT_RETENTION: want at least %s, got %s", MinEventRetention, c.EventRetention))
	}
	if c.AuditRetention != 0 && c.AuditRetention < MinAuditRetention {
		errs = append(errs, fmt.Errorf("AUDIT_RETENTION: want 0 (forever) or at least %s, got %s", MinAuditRetention, c.AuditRetention))
	}
	if c.IdempotencyKeyTTL < time.Minute {
		errs = append(errs, fmt.Errorf("IDEMPOTENCY_KEY_TTL: want at least 1m, got %s", c.IdempotencyKeyTTL))
	}
	if (c.BootstrapAdminEmail == "") != (c.BootstrapAdminKeyFile == "") {
		errs = append(errs, errors.New("BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_KEY_FILE: set both or neither"))
	}
	if c.SandboxResetInterval < time.Minute {
		errs = append(errs, errors.New("SANDBOX_RESET_INTERVAL: want at least 1m"))
	}
	return errors.Join(errs...)
}

// ParseDatabaseURL splits DATABASE_URL into the dialect ("sqlite" or
// "postgres") and the driver's data source.
func ParseDatabaseURL(raw string) (dialect, dsn string, err error) {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return "", "", errors.New("want sqlite:PATH, for example sqlite:data/app.db")
		}
		return "sqlite", path, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		if _, err := url.Parse(raw); err != nil {
			return "", "", fmt.Errorf("bad postgres URL: %w", err)
		}
		return "postgres", raw, nil
	default:
		return "", "", fmt.Errorf("want sqlite:PATH or postgres://…, got %q", redact(raw))
	}
}

// redact hides a password in a URL so that it can be printed.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

func str(p *string) func(string) error {
	return func(s string) error { *p = strings.TrimSpace(s); return nil }
}

func duration(p *time.Duration) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration such as 90s or 1h, got %q", s)
		}
		*p = d
		return nil
	}
}

func nonNegativeDuration(p *time.Duration) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 100ms, or 0, got %q", s)
		}
		*p = d
		return nil
	}
}

func durations(p *[]time.Duration) func(string) error {
	return func(s string) error {
		var out []time.Duration
		for _, part := range strings.Split(s, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d <= 0 {
				return fmt.Errorf("want comma-separated positive durations such as 5s,5m,1h, got %q", s)
			}
			out = append(out, d)
		}
		*p = out
		return nil
	}
}

func positive(p *int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("want a positive whole number, got %q", s)
		}
		*p = n
		return nil
	}
}

func nonNegative(p *int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number, 0 or more, got %q", s)
		}
		*p = n
		return nil
	}
}

func boolean(p *bool) func(string) error {
	return func(s string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		*p = b
		return nil
	}
}

func list(p *[]string) func(string) error {
	return func(s string) error {
		*p = nil
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*p = append(*p, part)
			}
		}
		return nil
	}
}

func level(p *slog.Level) func(string) error {
	return func(s string) error {
		if err := p.UnmarshalText([]byte(strings.TrimSpace(s))); err != nil {
			return fmt.Errorf("want debug, info, warn or error, got %q", s)
		}
		return nil
	}
}
