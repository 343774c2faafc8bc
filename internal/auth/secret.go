package auth

import (
	"context"
	"fmt"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/setting"
)

// storedSecrets are the settings rows in which earlier versions kept
// secrets in plaintext: the generated token signing secret and the sandbox
// seed. Both now derive from the server secret (internal/secrets), which
// the database never holds.
var storedSecrets = []string{"jwt_secret", "sandbox_seed_secret"}

// DropStoredSecrets deletes the secrets earlier versions kept in the
// database, so that a backup made from now on holds none. Tokens signed with
// the old secret stop working: their holders log in again.
func DropStoredSecrets(ctx context.Context, client *ent.Client) error {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	if _, err := client.Setting.Delete().Where(setting.IDIn(storedSecrets...)).Exec(ctx); err != nil {
		return fmt.Errorf("drop stored secrets: %w", err)
	}
	return nil
}
