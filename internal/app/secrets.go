package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/service"
)

// serverKeys finds the server secret (DESIGN §7): SECRET_KEY, or else, for
// a SQLite file, a key file beside it (made on first start, mode 0600). A
// PostgreSQL deployment has no such place that every replica shares, and
// the database must not hold it, so there SECRET_KEY is required.
func serverKeys(cfg config.Config) (*secrets.Keys, error) {
	if cfg.SecretKey != "" {
		return secrets.New([]byte(cfg.SecretKey))
	}
	dialect, path, err := config.ParseDatabaseURL(cfg.DatabaseURL)
	switch {
	case err != nil:
		return nil, err
	case dialect != "sqlite":
		return nil, errors.New("SECRET_KEY: required with PostgreSQL, the same on every replica (openssl rand -hex 32 makes one); it is never stored in the database")
	case path == ":memory:":
		return secrets.Random(), nil
	}
	return secrets.FromFile(KeyFile(cfg.DatabaseURL))
}

// unopenableShown is how many endpoints the start's error names; the
// command "server webhooks unopenable" lists them all.
const unopenableShown = 10

// checkWebhookSecrets makes a changed or lost SECRET_KEY loud: one ERROR line
// at start when stored webhook secrets do not open with the server secret,
// saying how many, naming the first, and what to do. It costs a count in the
// database (a sealed value names its key), whatever the number of endpoints.
func checkWebhookSecrets(ctx context.Context, svc *service.Service, log *slog.Logger) error {
	found, err := svc.UnopenableWebhookSecrets(ctx, unopenableShown)
	if err != nil {
		return fmt.Errorf("check webhook secrets: %w", err)
	}
	if found.Count == 0 {
		return nil
	}
	ids := make([]string, len(found.First))
	for i, ep := range found.First {
		ids[i] = ep.ID
	}
	log.ErrorContext(ctx, fmt.Sprintf("%d of %d stored webhook signing secrets do not open with this SECRET_KEY: "+
		"it was changed or lost since they were sealed. Their deliveries fail, unsent, until the previous "+
		"SECRET_KEY is restored, or each endpoint's secret is rotated (POST /v1/webhooks/{id}/rotate-secret; "+
		"give the receiver the new secret). List them with: server webhooks unopenable", found.Count, found.Total),
		"endpoints", found.Count, "total", found.Total, "first", ids)
	return nil
}
