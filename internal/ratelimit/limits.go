package ratelimit

import (
	"context"
	"log/slog"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/ulule/limiter/v3"
)

// DefaultPrefix namespaces the counters in the store (Redis keys start with
// it), so that several deployments or tests can share one Redis.
const DefaultPrefix = "itemsvc:ratelimit"

// Config is what Open needs: the limits, the store and where to report.
type Config struct {
	PerMinute, PerHour     int
	LoginFailuresPerMinute int
	// AnonymousPerMinute is the GraphQL budget of a client address without
	// a token (login and introspection), in points per minute.
	AnonymousPerMinute int
	// RedisURL selects the Redis store, shared by every replica; empty keeps
	// the counters in this process's memory.
	RedisURL string
	// Prefix namespaces the counters; empty means DefaultPrefix.
	Prefix string
	Logger *slog.Logger
	// Metrics receives the limiter's series; nil: not exported.
	Metrics *vm.Set
	// Cooldown is how long the store is left alone after it failed
	// (default 1s); LogEvery how often that failure may be logged
	// (default 1m).
	Cooldown, LogEvery time.Duration
}

// Limits are the server's two limiters over one store.
type Limits struct {
	// Keys limits authenticated requests per API key: every token of a key
	// spends the same budget, on REST and GraphQL alike.
	Keys *Limiter
	// Logins limits failed logins per client address.
	Logins *Limiter
	// Anonymous limits GraphQL requests without a token per client
	// address, in points (login and introspection are all they may run).
	Anonymous *Limiter
	// Store names the store in use, "memory" or "redis".
	Store string

	close func() error
}

// Open builds the limiters. With a Redis URL it does not fail when Redis is
// down: it warns, and requests go through unchecked until Redis answers.
func Open(ctx context.Context, cfg Config) (*Limits, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = time.Second
	}
	if cfg.LogEvery <= 0 {
		cfg.LogEvery = time.Minute
	}
	m := newMetrics(cfg.Metrics)
	guard := &failOpen{log: cfg.Logger, metrics: m, cooldown: cfg.Cooldown, logEvery: cfg.LogEvery}

	l := &Limits{Store: "memory", close: func() error { return nil }}
	var store limiter.Store
	if cfg.RedisURL == "" {
		store = newMemoryStore(cfg.Prefix)
	} else {
		client, err := newRedisClient(cfg.RedisURL)
		if err != nil {
			return nil, err
		}
		if err := client.Ping(ctx).Err(); err != nil {
			cfg.Logger.WarnContext(ctx, "Redis for rate limits is unreachable; requests go through unchecked until it answers", "err", err.Error())
		}
		store = &lazyRedisStore{client: client, prefix: cfg.Prefix}
		l.Store, l.close = "redis", client.Close
	}
	l.Keys = newLimiter("key", store, guard, m,
		Window{Name: WindowMinute, Limit: int64(cfg.PerMinute), Period: time.Minute},
		Window{Name: WindowHour, Limit: int64(cfg.PerHour), Period: time.Hour})
	l.Logins = newLimiter("login", store, guard, m,
		Window{Name: "minute", Limit: int64(cfg.LoginFailuresPerMinute), Period: time.Minute})
	l.Anonymous = newLimiter("anonymous", store, guard, m,
		Window{Name: "minute", Limit: int64(cfg.AnonymousPerMinute), Period: time.Minute})
	return l, nil
}

// Close releases the store's connections.
func (l *Limits) Close() error { return l.close() }
