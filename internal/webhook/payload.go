package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/schema"
	"github.com/acme/itemsvc/internal/secrets"
)

// body is the JSON sent for an event (DESIGN §4).
type body struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Timestamp time.Time       `json:"timestamp"`
}

// Payload is the body of an event's deliveries: its id, type, the item as
// the API rendered it in the transaction of the change, and the time of the
// change. It is the same on every attempt, so a receiver can deduplicate on
// the id and compare bodies.
func Payload(ev *ent.Event) ([]byte, error) {
	return json.Marshal(body{
		ID:        ev.ID,
		Event:     ev.Type,
		Data:      json.RawMessage(ev.Data),
		Timestamp: ev.CreatedAt.UTC(),
	})
}

// signingSecrets are the secrets that sign for an endpoint at now: the
// current one, and the previous one until its grace period after a rotation
// ends, opened with box (they are stored sealed); a nil box takes them as
// they are stored. A previous secret that does not open (sealed under an
// earlier SECRET_KEY, the reason to rotate) is left out.
func signingSecrets(box *secrets.Box, ep *ent.WebhookEndpoint, now time.Time) ([]string, error) {
	current := ep.Secret
	var previous string
	if ep.PreviousSecret != "" && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		previous = ep.PreviousSecret
	}
	if box != nil {
		var err error
		if current, err = box.Open(current); err != nil {
			return nil, fmt.Errorf("endpoint %s signing secret: %w", ep.ID, err)
		}
		if previous != "" {
			previous, _ = box.Open(previous)
		}
	}
	if previous == "" {
		return []string{current}, nil
	}
	return []string{current, previous}, nil
}

// EventTypes are the events an endpoint may subscribe to, in the order they
// are listed back.
var EventTypes = []string{schema.EventItemCreated, schema.EventItemUpdated, schema.EventItemDeleted}
