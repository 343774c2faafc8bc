package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/setting"
)

// secretSetting names the generated signing secret in the settings table.
const secretSetting = "jwt_secret"

// SigningSecret returns the configured secret, or else the one kept in the
// database, generating and storing it on first use, so that every replica and
// every restart signs with the same secret.
func SigningSecret(ctx context.Context, client *ent.Client, configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	return StoredSecret(ctx, client, secretSetting)
}

// StoredSecret returns the random secret kept in the settings row name,
// making it on first use. Replicas that start together race to insert; the
// first insert wins and all read it back.
func StoredSecret(ctx context.Context, client *ent.Client, name string) ([]byte, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	err := client.Setting.Create().
		SetID(name).
		SetValue(hex.EncodeToString(b)).
		OnConflictColumns(setting.FieldID).
		DoNothing().
		Exec(ctx)
	// DoNothing on an existing row reports "no rows": someone was first.
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store secret %s: %w", name, err)
	}
	s, err := client.Setting.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	return []byte(s.Value), nil
}
