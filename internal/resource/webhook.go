package resource

import (
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
)

// Webhook is a webhook endpoint as its owner sees it. Secret is set only in
// the answers to create and rotate-secret: it is shown once.
type Webhook struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	Events      []string `json:"events"` // empty: all events
	Active      bool     `json:"active"`
	UserID      string   `json:"user_id"`
	Secret      string   `json:"secret,omitempty"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing; absent when none is signing.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	// ConsecutiveFailures counts the attempts that failed in a row; while
	// above zero the endpoint gets one attempt at a time.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// BackoffUntil is when the circuit breaker lets attempts through again;
	// absent when it is not holding the endpoint's deliveries.
	BackoffUntil *time.Time `json:"backoff_until"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// NewWebhook renders an endpoint without its secret.
func NewWebhook(ep *ent.WebhookEndpoint) Webhook {
	events := ep.Events
	if events == nil {
		events = []string{}
	}
	w := Webhook{
		ID:          ep.ID,
		URL:         ep.URL,
		Description: ep.Description,
		Events:      events,
		Active:      ep.Active,
		UserID:      ep.UserID,
		CreatedAt:   ep.CreatedAt.UTC(),
		UpdatedAt:   ep.UpdatedAt.UTC(),
	}
	if t := ep.PreviousSecretExpiresAt; t != nil && ep.PreviousSecret != "" && time.Now().Before(*t) {
		u := t.UTC()
		w.PreviousSecretExpiresAt = &u
	}
	w.ConsecutiveFailures = ep.ConsecutiveFailures
	if t := ep.BackoffUntil; t != nil && time.Now().Before(*t) {
		u := t.UTC()
		w.BackoffUntil = &u
	}
	return w
}

// NewWebhookWithSecret renders an endpoint with its current secret, for the
// one answer that may show it.
func NewWebhookWithSecret(ep *ent.WebhookEndpoint) Webhook {
	w := NewWebhook(ep)
	w.Secret = ep.Secret
	return w
}

// NewWebhooks renders a page of endpoints.
func NewWebhooks(eps []*ent.WebhookEndpoint) []Webhook {
	out := make([]Webhook, len(eps))
	for i, ep := range eps {
		out[i] = NewWebhook(ep)
	}
	return out
}

// Delivery is one event on its way to one endpoint, with its latest attempts.
type Delivery struct {
	ID        string         `json:"id"`
	WebhookID string         `json:"webhook_id"`
	EventID   string         `json:"event_id"`
	Event     string         `json:"event"`
	State     delivery.State `json:"state"`
	Attempts  int            `json:"attempts"`
	// NextAttemptAt is when the next attempt is due; absent unless pending.
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error"`
	LastDurationMs *int       `json:"last_duration_ms"`
	AttemptLog     []Attempt  `json:"attempt_log"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// Attempt is one HTTP attempt of a delivery.
type Attempt struct {
	Number     int       `json:"number"`
	StatusCode *int      `json:"status_code"`
	Error      string    `json:"error"`
	DurationMs int       `json:"duration_ms"`
	At         time.Time `json:"at"`
}

// NewDelivery renders a delivery with its loaded event and attempt log.
func NewDelivery(d *ent.Delivery) Delivery {
	out := Delivery{
		ID:             d.ID,
		WebhookID:      d.EndpointID,
		EventID:        d.EventID,
		State:          d.State,
		Attempts:       d.Attempts,
		LastStatusCode: d.LastStatusCode,
		LastError:      d.LastError,
		LastDurationMs: d.LastDurationMs,
		AttemptLog:     make([]Attempt, len(d.Edges.AttemptLog)),
		CreatedAt:      d.CreatedAt.UTC(),
		UpdatedAt:      d.UpdatedAt.UTC(),
	}
	if d.Edges.Event != nil {
		out.Event = d.Edges.Event.Type
	}
	if d.State == delivery.StatePending {
		t := d.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	for i, a := range d.Edges.AttemptLog {
		out.AttemptLog[i] = Attempt{
			Number:     a.Number,
			StatusCode: a.StatusCode,
			Error:      a.Error,
			DurationMs: a.DurationMs,
			At:         a.CreatedAt.UTC(),
		}
	}
	return out
}

// NewDeliveries renders a page of deliveries.
func NewDeliveries(ds []*ent.Delivery) []Delivery {
	out := make([]Delivery, len(ds))
	for i, d := range ds {
		out[i] = NewDelivery(d)
	}
	return out
}

// Recovery is the answer to a bulk recovery: how many failed deliveries of
// the webhook, created at or after Since, were made pending again.
type Recovery struct {
	WebhookID string    `json:"webhook_id"`
	Since     time.Time `json:"since"`
	Requeued  int       `json:"requeued"`
}

// NewRecovery renders the result of a bulk recovery.
func NewRecovery(webhookID string, since time.Time, requeued int) Recovery {
	return Recovery{WebhookID: webhookID, Since: since.UTC(), Requeued: requeued}
}
