package ratelimit

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
	redisstore "github.com/ulule/limiter/v3/drivers/store/redis"
)

// redisTimeout bounds every Redis call unless REDIS_URL sets its own
// (dial_timeout, read_timeout, write_timeout, pool_timeout): a dead Redis
// must not add seconds to a request.
const redisTimeout = 250 * time.Millisecond

func newMemoryStore(prefix string) limiter.Store {
	return memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: prefix, CleanUpInterval: limiter.DefaultCleanUpInterval})
}

// newRedisClient builds a client with short timeouts and no retries, so a
// failing Redis fails fast and the limiter fails open.
func newRedisClient(raw string) (*redis.Client, error) {
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	q := u.Query()
	for name, d := range map[string]*time.Duration{
		"dial_timeout": &opt.DialTimeout, "read_timeout": &opt.ReadTimeout,
		"write_timeout": &opt.WriteTimeout, "pool_timeout": &opt.PoolTimeout,
	} {
		if !q.Has(name) {
			*d = redisTimeout
		}
	}
	if !q.Has("max_retries") {
		opt.MaxRetries = -1 // none: the next request is the retry
	}
	opt.DialerRetries = 1
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(opt), nil
}

// lazyRedisStore is ulule's Redis store, created on first use: that store
// loads its Lua scripts when it is built, which fails while Redis is down,
// and the server must start (and fail open) all the same.
type lazyRedisStore struct {
	client *redis.Client
	prefix string
	store  atomic.Pointer[limiter.Store]
}

func (s *lazyRedisStore) get() (limiter.Store, error) {
	if st := s.store.Load(); st != nil {
		return *st, nil
	}
	st, err := redisstore.NewStoreWithOptions(s.client, limiter.StoreOptions{Prefix: s.prefix})
	if err != nil {
		return nil, fmt.Errorf("redis rate-limit store: %w", err)
	}
	s.store.CompareAndSwap(nil, &st)
	return *s.store.Load(), nil
}

// Get implements limiter.Store.
func (s *lazyRedisStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := s.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Get(ctx, key, rate)
}

// Peek implements limiter.Store.
func (s *lazyRedisStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := s.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Peek(ctx, key, rate)
}

// Reset implements limiter.Store.
func (s *lazyRedisStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := s.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Reset(ctx, key, rate)
}

// Increment implements limiter.Store.
func (s *lazyRedisStore) Increment(ctx context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	st, err := s.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Increment(ctx, key, count, rate)
}
