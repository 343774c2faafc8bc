package webhook

import (
	"encoding/json"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/schema"
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

// secrets are the secrets that sign for an endpoint at now: the current one,
// and the previous one until its grace period after a rotation ends.
func secrets(ep *ent.WebhookEndpoint, now time.Time) []string {
	out := []string{ep.Secret}
	if ep.PreviousSecret != "" && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		out = append(out, ep.PreviousSecret)
	}
	return out
}

// EventTypes are the events an endpoint may subscribe to, in the order they
// are listed back.
var EventTypes = []string{schema.EventItemCreated, schema.EventItemUpdated, schema.EventItemDeleted}
