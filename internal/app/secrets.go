package app

import (
	"errors"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/secrets"
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
	return secrets.FromFile(path + ".key")
}
