package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// TestAttemptOutcomes: what each kind of answer does to a delivery, one row
// per rule of DESIGN §4.
func TestAttemptOutcomes(t *testing.T) {
	hour := time.Hour
	tests := []struct {
		name     string
		schedule []time.Duration
		opts     func(*app.Options)
		answer   func(r *http.Request) (int, http.Header)
		// done says when the delivery has reached the state to check.
		done  func(d *ent.Delivery) bool
		check func(t *testing.T, d *ent.Delivery, ep *ent.WebhookEndpoint, sentAt time.Time)
	}{
		{
			name:     "5xx is retried on the schedule, then failed",
			schedule: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond},
			answer:   func(*http.Request) (int, http.Header) { return 500, nil },
			done:     func(d *ent.Delivery) bool { return d.State != delivery.StatePending },
			check: func(t *testing.T, d *ent.Delivery, ep *ent.WebhookEndpoint, _ time.Time) {
				if d.State != delivery.StateFailed || d.Attempts != 3 || len(d.Edges.AttemptLog) != 3 {
					t.Errorf("state %s after %d attempts (%d logged), want failed after 3", d.State, d.Attempts, len(d.Edges.AttemptLog))
				}
				for _, a := range d.Edges.AttemptLog {
					if a.StatusCode == nil || *a.StatusCode != 500 || a.Error != "receiver answered 500 Internal Server Error" {
						t.Errorf("attempt %d: status %v error %q", a.Number, a.StatusCode, a.Error)
					}
				}
				if !ep.Active {
					t.Error("a failed delivery disabled the endpoint")
				}
			},
		},
		{
			name:     "retry delay follows the schedule with jitter",
			schedule: []time.Duration{hour},
			opts:     func(o *app.Options) { o.Webhooks.Jitter = nil }, // the production jitter
			answer:   func(*http.Request) (int, http.Header) { return 502, nil },
			done:     func(d *ent.Delivery) bool { return d.Attempts == 1 },
			check: func(t *testing.T, d *ent.Delivery, _ *ent.WebhookEndpoint, sentAt time.Time) {
				delay := d.NextAttemptAt.Sub(sentAt)
				if d.State != delivery.StatePending || delay < 53*time.Minute || delay > 67*time.Minute {
					t.Errorf("state %s, next attempt in %s; want pending in 1h ±10%%", d.State, delay)
				}
			},
		},
		{
			name:     "429 with Retry-After waits as asked",
			schedule: []time.Duration{10 * time.Millisecond},
			answer: func(*http.Request) (int, http.Header) {
				return 429, http.Header{"Retry-After": {"7200"}}
			},
			done: func(d *ent.Delivery) bool { return d.Attempts == 1 },
			check: func(t *testing.T, d *ent.Delivery, _ *ent.WebhookEndpoint, sentAt time.Time) {
				delay := d.NextAttemptAt.Sub(sentAt)
				if d.State != delivery.StatePending || delay < 119*time.Minute || delay > 121*time.Minute {
					t.Errorf("state %s, next attempt in %s; want pending in 2h", d.State, delay)
				}
			},
		},
		{
			name:     "410 Gone fails the delivery and disables the endpoint",
			schedule: []time.Duration{10 * time.Millisecond},
			answer:   func(*http.Request) (int, http.Header) { return 410, nil },
			done:     func(d *ent.Delivery) bool { return d.State != delivery.StatePending },
			check: func(t *testing.T, d *ent.Delivery, ep *ent.WebhookEndpoint, _ time.Time) {
				if d.State != delivery.StateFailed || d.Attempts != 1 || ep.Active {
					t.Errorf("state %s after %d attempts, endpoint active %v; want failed after 1, disabled", d.State, d.Attempts, ep.Active)
				}
			},
		},
		{
			name:     "no answer within the timeout is a failed attempt",
			schedule: []time.Duration{hour},
			opts:     func(o *app.Options) { o.Webhooks.Timeout = 50 * time.Millisecond },
			answer: func(r *http.Request) (int, http.Header) {
				<-r.Context().Done()
				return 200, nil
			},
			done: func(d *ent.Delivery) bool { return d.Attempts == 1 },
			check: func(t *testing.T, d *ent.Delivery, _ *ent.WebhookEndpoint, _ time.Time) {
				if d.State != delivery.StatePending || d.LastStatusCode != nil || d.LastError != "no answer within 50ms" {
					t.Errorf("state %s, status %v, error %q", d.State, d.LastStatusCode, d.LastError)
				}
				if d.LastDurationMs == nil {
					t.Error("no duration recorded")
				} else if *d.LastDurationMs < 50 {
					t.Errorf("duration %d ms, want at least the timeout", *d.LastDurationMs)
				}
			},
		},
		{
			name:     "a redirect is an answer, not followed",
			schedule: []time.Duration{hour},
			answer: func(*http.Request) (int, http.Header) {
				return 307, http.Header{"Location": {"http://169.254.169.254/"}}
			},
			done: func(d *ent.Delivery) bool { return d.Attempts == 1 },
			check: func(t *testing.T, d *ent.Delivery, _ *ent.WebhookEndpoint, _ time.Time) {
				if d.State != delivery.StatePending || d.LastStatusCode == nil || *d.LastStatusCode != 307 {
					t.Errorf("state %s, status %v; want pending after a 307", d.State, d.LastStatusCode)
				}
			},
		},
		{
			name:     "2xx succeeds",
			schedule: []time.Duration{hour},
			answer:   func(*http.Request) (int, http.Header) { return 202, nil },
			done:     func(d *ent.Delivery) bool { return d.State != delivery.StatePending },
			check: func(t *testing.T, d *ent.Delivery, _ *ent.WebhookEndpoint, _ time.Time) {
				if d.State != delivery.StateSucceeded || d.Attempts != 1 || d.LastError != "" || d.ClaimedUntil != nil {
					t.Errorf("state %s, attempts %d, error %q, claimed %v", d.State, d.Attempts, d.LastError, d.ClaimedUntil)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []testutil.Option{fastWebhooks(tt.schedule...)}
			if tt.opts != nil {
				opts = append(opts, testutil.WithAppOptions(tt.opts))
			}
			env := testutil.New(t, opts...)
			start(t, env)
			rc := newReceiver(t)
			rc.setAnswer(tt.answer)
			epID, _ := register(t, env, env.Alice, rc.URL)
			env.CreateItem(env.Alice, "x")
			sent := rc.waitFor(t, 10*time.Second, func(received) bool { return true })

			var d *ent.Delivery
			if !testutil.Eventually(t, 10*time.Second, func() bool {
				ds := deliveries(t, env.App.DB.Client, epID)
				if len(ds) == 1 && ds[0].ClaimedUntil == nil && tt.done(ds[0]) {
					d = ds[0]
					return true
				}
				return false
			}) {
				t.Fatalf("delivery never reached the state to check: %+v", deliveries(t, env.App.DB.Client, epID))
			}
			ep, err := env.App.DB.Client.WebhookEndpoint.Get(sys(), epID)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, d, ep, sent.At)
		})
	}
}

// TestFailedDeliveryRetriedByHand: a delivery out of attempts is listed as
// failed, and a manual retry sends it once more.
func TestFailedDeliveryRetriedByHand(t *testing.T) {
	env := testutil.New(t, fastWebhooks(10*time.Millisecond))
	start(t, env)
	rc := newReceiver(t)
	rc.setAnswer(func(*http.Request) (int, http.Header) { return 503, nil })
	epID, secret := register(t, env, env.Alice, rc.URL)
	itemID := env.CreateItem(env.Alice, "x")

	var failed []map[string]any
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		r := env.Do(testutil.Request{Method: "GET", Path: "/v1/webhooks/" + epID + "/deliveries?state=failed", Token: env.Alice.Token})
		r.Data(t, &failed)
		return len(failed) == 1
	}) {
		t.Fatal("the delivery was never listed as failed")
	}
	if log, _ := failed[0]["attempt_log"].([]any); len(log) != 2 || failed[0]["attempts"] != 2.0 || failed[0]["event"] != "item.created" {
		t.Errorf("failed delivery: %v", failed[0])
	}

	rc.setAnswer(nil) // the receiver is fixed
	id := failed[0]["id"].(string)
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + epID + "/deliveries/" + id + "/retry", Token: env.Alice.Token})
	testutil.Scenario{Status: 200, Contains: []string{`"state":"pending"`, `"id":"` + id + `"`}}.Assert(t, r)
	verify(t, secret, rc.waitFor(t, 10*time.Second, eventIs("item.created", itemID)))
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		d := deliveries(t, env.App.DB.Client, epID)[0]
		return d.State == delivery.StateSucceeded && d.Attempts == 3
	}) {
		t.Errorf("after the manual retry: %+v", deliveries(t, env.App.DB.Client, epID)[0])
	}
}

// TestRotatedSecretSignsBeside: after a rotation both secrets sign for 24h,
// so a receiver still on the old secret and one on the new both verify.
func TestRotatedSecretSignsBeside(t *testing.T) {
	env := testutil.New(t, fastWebhooks())
	start(t, env)
	rc := newReceiver(t)
	epID, oldSecret := register(t, env, env.Alice, rc.URL)
	r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + epID + "/rotate-secret", Token: env.Alice.Token})
	var rotated struct {
		Secret                  string
		PreviousSecretExpiresAt time.Time `json:"previous_secret_expires_at"`
	}
	r.Data(t, &rotated)
	if !strings.HasPrefix(rotated.Secret, webhook.SecretPrefix) || rotated.Secret == oldSecret {
		t.Fatalf("rotated secret %q", rotated.Secret)
	}
	if left := time.Until(rotated.PreviousSecretExpiresAt); left < 23*time.Hour || left > 24*time.Hour {
		t.Errorf("old secret expires in %s, want 24h", left)
	}

	itemID := env.CreateItem(env.Alice, "x")
	got := rc.waitFor(t, 10*time.Second, eventIs("item.created", itemID))
	if sigs := strings.Fields(got.Header.Get(webhook.HeaderSignature)); len(sigs) != 2 {
		t.Errorf("webhook-signature has %d signatures, want 2: %v", len(sigs), sigs)
	}
	verify(t, oldSecret, got)
	verify(t, rotated.Secret, got)

	// Once the grace period is over, only the new secret signs.
	if err := env.App.DB.Client.WebhookEndpoint.UpdateOneID(epID).
		SetPreviousSecretExpiresAt(time.Now().Add(-time.Second)).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	itemID = env.CreateItem(env.Alice, "y")
	got = rc.waitFor(t, 10*time.Second, eventIs("item.created", itemID))
	if sigs := strings.Fields(got.Header.Get(webhook.HeaderSignature)); len(sigs) != 1 {
		t.Errorf("after expiry webhook-signature has %d signatures, want 1", len(sigs))
	}
	verify(t, rotated.Secret, got)
}
