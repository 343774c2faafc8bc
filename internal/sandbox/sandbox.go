package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/setting"
	"github.com/acme/itemsvc/internal/auth"
)

// Sandbox seeds and resets the demo data of one database.
type Sandbox struct {
	seed     deriver
	client   *ent.Client
	log      *slog.Logger
	interval time.Duration
}

// New returns the sandbox of a database, reset every interval by Run; its
// keys and ids derive from seed (secrets.PurposeSandbox of the server
// secret), so they are the same on every replica and after every restart.
func New(client *ent.Client, log *slog.Logger, interval time.Duration, seed []byte) *Sandbox {
	return &Sandbox{client: client, log: log, interval: interval, seed: deriver{secret: seed}}
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
	d := s.seed
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
	_, err := s.resetIf(ctx, time.Time{})
	return err
}

// ResetIfDue is one tick of the worker: it resets unless another replica did
// within half an interval, so that replicas sharing a database reset it once
// per interval, not once each. It reports whether it reset.
func (s *Sandbox) ResetIfDue(ctx context.Context) (bool, error) {
	return s.resetIf(ctx, time.Now().Add(-s.interval/2))
}

// resetIf resets if the last reset was before since (zero: always). The
// claim is an update of the last-reset setting in the reset's transaction:
// of replicas that tick together, one updates and resets, the others wait
// for its row lock, then find nothing to update and skip.
func (s *Sandbox) resetIf(ctx context.Context, since time.Time) (bool, error) {
	ctx = system(ctx)
	d := s.seed
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return false, fmt.Errorf("sandbox reset: begin: %w", err)
	}
	claimed, err := claimReset(ctx, tx, since)
	if err == nil && claimed {
		err = s.reset(ctx, tx, d)
	}
	if err != nil {
		_ = tx.Rollback()
		return false, fmt.Errorf("sandbox reset: %w", err)
	}
	if !claimed {
		return false, tx.Rollback()
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sandbox reset: commit: %w", err)
	}
	return true, nil
}

// resetAtSetting holds the time of the last reset, in a fixed-width UTC
// form so that string order is time order.
const (
	resetAtSetting = "sandbox_reset_at"
	resetAtLayout  = "2006-01-02T15:04:05.000000000Z"
)

// claimReset records this reset as the last one, unless one happened at or
// after since.
func claimReset(ctx context.Context, tx *ent.Tx, since time.Time) (bool, error) {
	err := tx.Setting.Create().
		SetID(resetAtSetting).
		SetValue(time.Time{}.Format(resetAtLayout)).
		OnConflictColumns(setting.FieldID).
		DoNothing().
		Exec(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("record reset: %w", err)
	}
	q := tx.Setting.Update().Where(setting.ID(resetAtSetting)).SetValue(time.Now().UTC().Format(resetAtLayout))
	if !since.IsZero() {
		q.Where(setting.ValueLT(since.UTC().Format(resetAtLayout)))
	}
	n, err := q.Save(ctx)
	if err != nil {
		return false, fmt.Errorf("record reset: %w", err)
	}
	return n == 1, nil
}

func (s *Sandbox) reset(ctx context.Context, tx *ent.Tx, d deriver) error {
	// Children before parents, for the foreign keys. Deleting items writes
	// item.deleted events, and seeding writes item.created ones: the events
	// are cleared last, so the seed starts with an empty outbox.
	steps := []struct {
		what string
		del  func(context.Context) (int, error)
	}{
		{"delivery attempts", tx.DeliveryAttempt.Delete().Exec},
		{"deliveries", tx.Delivery.Delete().Exec},
		{"events", tx.Event.Delete().Exec},
		{"webhook endpoints", tx.WebhookEndpoint.Delete().Exec},
		{"items", tx.Item.Delete().Exec},
		// Counted down to zero by the item deletes; the rows of users about
		// to go go with them.
		{"item counts", tx.ItemCount.Delete().Exec},
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
// next tick; a reset another replica made within half an interval counts.
func (s *Sandbox) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			start := time.Now()
			done, err := s.ResetIfDue(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.ErrorContext(ctx, "sandbox reset failed", "err", err)
			case done:
				s.log.InfoContext(ctx, "sandbox reset to its seed", "duration_ms", time.Since(start).Milliseconds())
			case err == nil:
				s.log.DebugContext(ctx, "sandbox reset skipped: another replica just did it")
			}
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
