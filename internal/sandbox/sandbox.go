package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/auth"
)

// Sandbox seeds and resets the demo data of one database.
type Sandbox struct {
	client   *ent.Client
	log      *slog.Logger
	interval time.Duration
}

// New returns the sandbox of a database, reset every interval by Run.
func New(client *ent.Client, log *slog.Logger, interval time.Duration) *Sandbox {
	return &Sandbox{client: client, log: log, interval: interval}
}

// system lets the sandbox past the privacy rules: it is an operator's action.
func system(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}

// Start makes sure the seed is in place, resetting the database when any
// demo key is missing or revoked (a first start, or a database that was not a
// sandbox before), and returns the demo keys to print. A restart keeps what
// clients did since the last reset.
func (s *Sandbox) Start(ctx context.Context) ([]Key, error) {
	ctx = system(ctx)
	d, err := loadSecret(ctx, s.client)
	if err != nil {
		return nil, err
	}
	keys := demoKeys(d)
	hashes := make([]string, len(keys))
	for i, k := range keys {
		hashes[i] = auth.HashKey(k.Key)
	}
	n, err := s.client.APIKey.Query().Where(apikey.KeyHashIn(hashes...), apikey.RevokedAtIsNil()).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("find sandbox keys: %w", err)
	}
	if n < len(keys) {
		if err := s.Reset(ctx); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Reset deletes every user, key, item and webhook and writes the seed again,
// in one transaction: a request sees the old data or the seed, never a mix.
// Settings (the signing secret, the seed secret) stay.
func (s *Sandbox) Reset(ctx context.Context) error {
	ctx = system(ctx)
	d, err := loadSecret(ctx, s.client)
	if err != nil {
		return err
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("sandbox reset: begin: %w", err)
	}
	if err := s.reset(ctx, tx, d); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("sandbox reset: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sandbox reset: commit: %w", err)
	}
	return nil
}

func (s *Sandbox) reset(ctx context.Context, tx *ent.Tx, d deriver) error {
	// Children before parents, for the foreign keys. Deleting items writes
	// item.deleted events, and seeding writes item.created ones: the events
	// are cleared last, so the seed starts with an empty outbox.
	steps := []struct {
		what string
		del  func(context.Context) (int, error)
	}{
		{"deliveries", tx.Delivery.Delete().Exec},
		{"events", tx.Event.Delete().Exec},
		{"webhook endpoints", tx.WebhookEndpoint.Delete().Exec},
		{"items", tx.Item.Delete().Exec},
		{"events", tx.Event.Delete().Exec},
		{"API keys", tx.APIKey.Delete().Exec},
		{"users", tx.User.Delete().Exec},
	}
	for _, st := range steps {
		if _, err := st.del(ctx); err != nil {
			return fmt.Errorf("delete %s: %w", st.what, err)
		}
	}
	if err := seed(ctx, tx, d); err != nil {
		return err
	}
	if _, err := tx.Event.Delete().Exec(ctx); err != nil {
		return fmt.Errorf("clear seed events: %w", err)
	}
	return nil
}

// Run resets the sandbox every interval until ctx ends; it is the server's
// "sandbox-reset" worker. A failed reset is logged and tried again at the
// next tick.
func (s *Sandbox) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			start := time.Now()
			if err := s.Reset(ctx); err != nil {
				if ctx.Err() == nil {
					s.log.ErrorContext(ctx, "sandbox reset failed", "err", err)
				}
				continue
			}
			s.log.InfoContext(ctx, "sandbox reset to its seed", "duration_ms", time.Since(start).Milliseconds())
		}
	}
}

// demoKeys lists the seed's keys in seed order.
func demoKeys(d deriver) []Key {
	var keys []Key
	for _, du := range seedUsers() {
		keys = append(keys, Key{Email: du.email, Name: du.name, Admin: du.admin, Key: d.key(du.email)})
	}
	return keys
}
