package events

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// Relay carries wake-ups between replicas: after a local commit the hub
// publishes one, and every replica's hub reads the outbox when one arrives.
// It carries no events: the outbox is the source of truth, and a wake-up
// lost (a relay down) only delays events until the hub's next poll.
type Relay interface {
	// Publish tells the other replicas that events were committed.
	Publish(ctx context.Context) error
	// Listen calls wake for every wake-up until ctx ends or the relay fails.
	Listen(ctx context.Context, wake func()) error
}

// Channel is the name wake-ups are published under (a PostgreSQL
// notification channel, a Redis pub/sub channel).
const Channel = "itemsvc_events"

// PostgresRelay relays wake-ups through LISTEN/NOTIFY: NOTIFY on the
// application's pool, LISTEN on a connection of its own (a pooled
// connection cannot be held by a listener).
type PostgresRelay struct {
	DB  *sql.DB // the pool NOTIFY goes through
	DSN string  // DATABASE_URL, for the listening connection
}

// Publish implements Relay.
func (r PostgresRelay) Publish(ctx context.Context) error {
	_, err := r.DB.ExecContext(ctx, "SELECT pg_notify($1, '')", Channel)
	return err
}

// Listen implements Relay.
func (r PostgresRelay) Listen(ctx context.Context, wake func()) error {
	conn, err := pgx.Connect(ctx, r.DSN)
	if err != nil {
		return fmt.Errorf("connect listener: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Events committed while no listener was connected are found now.
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		wake()
	}
}

// RedisRelay relays wake-ups through Redis pub/sub (REDIS_URL).
type RedisRelay struct {
	Client  *redis.Client
	Channel string // default Channel
}

func (r RedisRelay) channel() string {
	if r.Channel == "" {
		return Channel
	}
	return r.Channel
}

// Publish implements Relay.
func (r RedisRelay) Publish(ctx context.Context) error {
	return r.Client.Publish(ctx, r.channel(), "").Err()
}

// Listen implements Relay.
func (r RedisRelay) Listen(ctx context.Context, wake func()) error {
	ps := r.Client.Subscribe(ctx, r.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		return fmt.Errorf("subscribe: %w", err)
	}
	wake()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-ch:
			if !ok {
				return fmt.Errorf("redis subscription closed")
			}
			wake()
		}
	}
}

// relayRetry is how long a failed listener waits before reconnecting.
const relayRetry = time.Second

// relay runs the hub's side of its Relay until ctx ends: it listens (again
// after a failure), and publishes a wake-up after local commits, one for
// all those that came while the last was being sent.
func (h *Hub) relay(ctx context.Context) {
	r := h.opts.Relay
	listening := make(chan struct{})
	defer func() { <-listening }()
	go func() {
		defer close(listening)
		for ctx.Err() == nil {
			err := r.Listen(ctx, h.Notify)
			if ctx.Err() != nil {
				return
			}
			h.log.WarnContext(ctx, "event wake-ups from other replicas interrupted; reconnecting", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(relayRetry):
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.publish:
			pctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
			if err := r.Publish(pctx); err != nil && ctx.Err() == nil {
				h.log.WarnContext(ctx, "publish an event wake-up", "err", err)
			}
			cancel()
		}
	}
}

// Committed is called after a local commit of item changes: it wakes this
// hub and, through the relay, every other replica's.
func (h *Hub) Committed() {
	h.Notify()
	if h.opts.Relay == nil {
		return
	}
	select {
	case h.publish <- struct{}{}:
	default:
	}
}
