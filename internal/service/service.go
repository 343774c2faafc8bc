// Package service is the application layer: login, token checks, users and
// items, with the contract's validation and errors. REST and GraphQL only
// decode, call these functions and render, so both behave the same.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/auth"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/retention"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/viewer"
	"github.com/acme/itemsvc/internal/webhook"
)

// Options tune a Service; the zero value is the production default.
type Options struct {
	// Dialect is the database's ("sqlite3" or "postgres"): Bootstrap takes
	// PostgreSQL's advisory lock on "postgres".
	Dialect string
	// KeyRecheck is how long a key's state (revoked, owner role) is trusted
	// before a token check reads it again: the longest a revoked key's tokens
	// keep working on another replica. Default 5s.
	KeyRecheck time.Duration
	// KeyPrefix is the prefix of new API keys: auth.LivePrefix or auth.TestPrefix.
	KeyPrefix string
	// OnCommit runs after every committed item change, to wake the webhook
	// dispatcher without waiting for its poll.
	OnCommit func()
	// LoginLimiter, when set, limits failed logins per client address on
	// every transport.
	LoginLimiter LoginLimiter
	// Logger receives the service's warnings; default slog.Default().
	Logger *slog.Logger
	// WebhookGuard checks receiver URLs at registration (WEBHOOK_ALLOW_PRIVATE);
	// default: no loopback, private or link-local addresses.
	WebhookGuard *webhook.Guard
	// StreamRecheck is how often an open event stream's token and key are
	// checked again (and at the token's expiry). Each check trusts a key
	// state no older than StreamRecheck, so a revoked key's streams end
	// within twice this, on every replica. Default KeyRecheck/2: a
	// revocation ends a stream within KeyRecheck, as it refuses a request.
	// Most checks cost no database read: streams of one key share the
	// key cache, read at most once per StreamRecheck.
	StreamRecheck time.Duration
	// Events is the event feed streams subscribe to; nil: no streams.
	Events *events.Hub
	// EventWindow is the event history kept (EVENT_RETENTION): the feeds
	// list no older event and refuse an older cursor with CURSOR_EXPIRED.
	// The zero Window keeps everything.
	EventWindow retention.Window
	// SecretBox seals webhook signing secrets before they are stored
	// (internal/secrets); nil stores them as they are, which only tests do.
	SecretBox *secrets.Box
	// IdempotencyTTL is how long an Idempotency-Key is kept
	// (IDEMPOTENCY_KEY_TTL); default DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// IdempotencyTakeover is the age past which a key's claim still
	// running belongs to a request that can no longer commit (its server
	// died), and a retry may take it over: longer than REQUEST_TIMEOUT.
	// Default DefaultIdempotencyTakeover.
	IdempotencyTakeover time.Duration
	// MaxKeysPerUser is the most active API keys (neither revoked nor
	// expired) one user may hold when the API makes another
	// (MAX_KEYS_PER_USER); 0: DefaultMaxKeysPerUser, below 0: no cap.
	MaxKeysPerUser int
	// Backups place the backups admins make through the API (backups.go).
	Backups BackupOptions
}

// Service implements the API's operations on one database.
type Service struct {
	db     *ent.Client
	tokens *auth.Tokens
	keys   *keyCache
	opts   Options
	log    *slog.Logger
	// background counts the writes made outside any request (a key's
	// last use), which Wait lets finish before the database closes.
	background sync.WaitGroup
	// backupMu lets one backup through the API be made at a time.
	backupMu sync.Mutex
}

// Wait returns once the service's background writes have finished. Its
// owner calls it after the last request, before closing the database: a
// write left running would use a closed pool, or recreate an SQLite file's
// log after its removal.
func (s *Service) Wait() { s.background.Wait() }

// New returns a service over an ent client, issuing tokens with tokens.
func New(client *ent.Client, tokens *auth.Tokens, opts Options) *Service {
	if opts.KeyRecheck == 0 {
		opts.KeyRecheck = 5 * time.Second
	}
	if opts.StreamRecheck <= 0 {
		opts.StreamRecheck = opts.KeyRecheck / 2
	}
	if opts.MaxKeysPerUser == 0 {
		opts.MaxKeysPerUser = DefaultMaxKeysPerUser
	}
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = auth.LivePrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	var changed func(string)
	if opts.Events != nil {
		changed = opts.Events.Recheck // a key's open streams check again at once
	}
	return &Service{
		db:     client,
		tokens: tokens,
		keys:   newKeyCache(opts.KeyRecheck, changed),
		opts:   opts,
		log:    opts.Logger,
	}
}

// Client is the ent client the service works on (for the GraphQL layer's
// read-only queries, which ent privacy holds to the same rules).
func (s *Service) Client() *ent.Client { return s.db }

// requireViewer returns the caller or UNAUTHORIZED.
func requireViewer(ctx context.Context) (viewer.Viewer, error) {
	v, ok := viewer.FromContext(ctx)
	if !ok {
		return viewer.Viewer{}, apperr.Unauthorized("authentication required")
	}
	return v, nil
}

// detach returns an entity withTx's transaction returned, bound to the
// client once that transaction has ended, so that a resolver loading one of
// its edges (createItem { owner }) reads through the client rather than a
// finished transaction; under an Idempotency-Key the transaction is still
// open, and the entity stays in it (its row is not yet visible outside).
func detach[T interface{ Unwrap() T }](ctx context.Context, v T) T {
	if _, ambient := ctx.Value(ambientTxKey{}).(*ambientTx); ambient {
		return v
	}
	return v.Unwrap()
}

// withTx runs fn in a transaction and commits it when fn succeeds. Item
// hooks write outbox events in the same transaction.
//
// Under Idempotent, fn runs in the request's transaction instead, which
// Idempotent commits with the key's record (idempotency.go). A change a
// route with an Idempotency-Key makes must therefore go through withTx: a
// write on s.db would not be part of it (and on SQLite would wait for the
// writer that transaction holds).
func (s *Service) withTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	if a, ok := ctx.Value(ambientTxKey{}).(*ambientTx); ok {
		return fn(a.tx)
	}
	tx, err := s.db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			s.log.WarnContext(ctx, "rollback failed", "err", rerr)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if s.opts.OnCommit != nil {
		s.opts.OnCommit()
	}
	return nil
}
