package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// logRecorder keeps every log record, for assertions on what an operator
// would read.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}

// errors returns the ERROR records whose message contains msg, each as its
// message and its attributes rendered with %v.
func (l *logRecorder) errors(msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.records {
		if r.Level != slog.LevelError || !strings.Contains(r.Message, msg) {
			continue
		}
		m := map[string]string{"msg": r.Message}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = fmt.Sprint(a.Value.Any())
			return true
		})
		out = append(out, m)
	}
	return out
}

// reopen starts a server on an existing database with another server secret
// and its own log, and logs its actors in again (tokens are signed with a
// key derived from the secret).
func reopen(t *testing.T, was *testutil.Env, secretKey string, log *logRecorder, opts ...testutil.Option) *testutil.Env {
	t.Helper()
	cfg := was.App.Config
	cfg.SecretKey = secretKey
	var ao app.Options
	for _, o := range opts {
		o(&cfg, &ao)
	}
	a, err := app.New(context.Background(), cfg, slog.New(log), ao)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	env := &testutil.Env{T: t, App: a}
	for _, p := range []struct {
		to   *testutil.Actor
		from testutil.Actor
	}{
		{&env.Admin, was.Admin}, {&env.Alice, was.Alice}, {&env.Bob, was.Bob},
	} {
		tok, err := a.Service.Login(context.Background(), p.from.Key)
		if err != nil {
			t.Fatalf("login again: %v", err)
		}
		*p.to = p.from
		p.to.Token = tok.AccessToken
	}
	return env
}

// TestSecretKeyChanged: a server restarted with another SECRET_KEY says so,
// once, at start, with the number of webhook secrets it cannot open and
// their endpoints. Their deliveries fail here, unsent, with that reason,
// without counting against the receivers' circuit breakers, and each
// endpoint is logged once however many attempts fail. Rotating the secret
// clears the endpoint's breaker (one tripped before the upgrade, too), and
// the deliveries held for want of the secret go out at once, signed with
// the new secret.
func TestSecretKeyChanged(t *testing.T) {
	keyA, keyB := strings.Repeat("a", 32), strings.Repeat("b", 32)
	dbURL := testutil.DatabaseURL(t)
	rc := newReceiver(t)
	// Two retries soon, the third in an hour: after three attempts a
	// delivery waits, unless something makes it due.
	fast := fastWebhooks(20*time.Millisecond, 20*time.Millisecond, time.Hour)
	breaker := testutil.WithAppOptions(func(o *app.Options) {
		o.Webhooks.BreakerThreshold = 2 // were local failures counted, three would trip it
		o.Webhooks.BreakerPause = time.Hour
	})
	first := testutil.New(t, fast, breaker, testutil.WithConfig(func(c *config.Config) {
		c.DatabaseURL, c.SecretKey = dbURL, keyA
	}))
	epAlice, _ := register(t, first, first.Alice, rc.URL+"/alice")
	epBob, _ := register(t, first, first.Bob, rc.URL+"/bob")
	// An endpoint sealed in the first format (no key id) under the second
	// key: it opens after the change, and is sealed again at start.
	boxB := mustKeys(t, keyB).Box(secrets.PurposeWebhooks)
	legacySecret := webhook.NewSecret()
	legacy, err := first.App.DB.Client.WebhookEndpoint.Create().SetUserID(first.Admin.UserID).SetURL(rc.URL + "/admin").
		SetSecret(secrets.LegacyPrefix + strings.TrimPrefix(boxB.Seal(legacySecret), boxB.Prefix())).
		SetEvents([]string{"item.deleted"}).Save(sys())
	if err != nil {
		t.Fatal(err)
	}
	// Bob's receiver tripped the breaker before the upgrade (the old code
	// counted these failures): it backs off for an hour.
	if err := first.App.DB.Client.WebhookEndpoint.UpdateOneID(epBob).SetConsecutiveFailures(7).
		SetBackoffUntil(time.Now().Add(time.Hour)).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	first.App.Close()

	log := &logRecorder{}
	env := reopen(t, first, keyB, log, fast, breaker)
	const startMsg = "stored webhook signing secrets do not open with this SECRET_KEY"
	lines := log.errors(startMsg)
	if len(lines) != 1 {
		t.Fatalf("start logged %d errors about the secrets, want 1: %v", len(lines), lines)
	}
	if l := lines[0]; l["endpoints"] != "2" || l["total"] != "3" || !strings.Contains(l["first"], epAlice) ||
		!strings.Contains(l["first"], epBob) || strings.Contains(l["first"], legacy.ID) ||
		!strings.HasPrefix(l["msg"], "2 of 3 ") || !strings.Contains(l["msg"], "rotate-secret") ||
		!strings.Contains(l["msg"], "previous SECRET_KEY") {
		t.Errorf("start error = %v; want 2 of 3 named, and what to do", l)
	}
	if ep, err := env.App.DB.Client.WebhookEndpoint.Get(sys(), legacy.ID); err != nil || !strings.HasPrefix(ep.Secret, boxB.Prefix()) {
		t.Errorf("the first format's secret was not sealed again under the key's id: %v", err)
	}

	start(t, env)
	itemID := env.CreateItem(env.Alice, "while the key is wrong")
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epAlice)
		return len(ds) == 1 && ds[0].Attempts == 3 && ds[0].ClaimedUntil == nil
	}) {
		t.Fatalf("no three attempts recorded: %v", deliveries(t, env.App.DB.Client, epAlice))
	}
	d := deliveries(t, env.App.DB.Client, epAlice)[0]
	if d.State != delivery.StatePending || d.LastError != webhook.SecretUnopenable || d.LastStatusCode != nil {
		t.Errorf("delivery: state %s, status %v, error %q; want pending, no status, %q", d.State, d.LastStatusCode, d.LastError, webhook.SecretUnopenable)
	}
	for _, a := range d.Edges.AttemptLog {
		if a.Error != webhook.SecretUnopenable || a.StatusCode != nil {
			t.Errorf("attempt %d: status %v, error %q", a.Number, a.StatusCode, a.Error)
		}
	}
	if n := len(rc.got); n != 0 {
		t.Errorf("the receiver was called %d times with a secret the server cannot open", n)
	}
	ep := endpoint(t, env.App.DB.Client, epAlice)
	if ep.ConsecutiveFailures != 0 || ep.BackoffUntil != nil {
		t.Errorf("local failures counted against the receiver: %d failures, backoff until %v", ep.ConsecutiveFailures, ep.BackoffUntil)
	}
	perEndpoint := log.errors("webhook deliveries fail unsent")
	if len(perEndpoint) != 1 || perEndpoint[0]["endpoint"] != epAlice {
		t.Errorf("per-endpoint errors = %v; want one line for %s for three attempts", perEndpoint, epAlice)
	}
	if v, ok := metricValue(t, env, "itemsvc_webhook_attempts_failed_locally_total", "reason", "secret_unopenable"); !ok || v != 3 {
		t.Errorf("attempts failed locally = %v (exported %v), want 3", v, ok)
	}
	bobItem := env.CreateItem(env.Bob, "held by the breaker")

	// Rotate both: the held deliveries go out now, signed with the new
	// secrets, and the breakers are clear.
	for _, r := range []struct {
		id    string
		as    testutil.Actor
		match func(received) bool
	}{
		{epAlice, env.Alice, eventIs("item.created", itemID)},
		{epBob, env.Bob, eventIs("item.created", bobItem)},
	} {
		res := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks/" + r.id + "/rotate-secret", Token: r.as.Token})
		var rotated struct {
			Secret                  string
			PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
		}
		res.Data(t, &rotated)
		if rotated.PreviousSecretExpiresAt != nil {
			t.Errorf("%s: the secret that does not open is kept signing until %v", r.id, rotated.PreviousSecretExpiresAt)
		}
		if ep := endpoint(t, env.App.DB.Client, r.id); ep.ConsecutiveFailures != 0 || ep.BackoffUntil != nil {
			t.Errorf("%s after rotate-secret: %d failures, backoff until %v; want the breaker clear", r.id, ep.ConsecutiveFailures, ep.BackoffUntil)
		}
		got := rc.waitFor(t, 10*time.Second, r.match)
		verify(t, rotated.Secret, got)
		if sigs := strings.Fields(got.Header.Get(webhook.HeaderSignature)); len(sigs) != 1 {
			t.Errorf("%s: %d signatures, want the new secret's alone", r.id, len(sigs))
		}
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		d := deliveries(t, env.App.DB.Client, epAlice)[0]
		return d.State == delivery.StateSucceeded && d.Attempts == 4
	}) {
		t.Errorf("delivery after rotate-secret: %+v", deliveries(t, env.App.DB.Client, epAlice)[0])
	}
	// The legacy endpoint, sealed under this key, was never in trouble.
	env.Do(testutil.Request{Method: "DELETE", Path: "/v1/items/" + itemID, Token: env.Alice.Token})
	verify(t, legacySecret, rc.waitFor(t, 10*time.Second, func(r received) bool {
		return r.Path == "/admin" && eventIs("item.deleted", itemID)(r)
	}))
	env.App.Close()

	// Once every secret is rotated, a start has nothing to say.
	quiet := &logRecorder{}
	reopen(t, first, keyB, quiet)
	if lines := quiet.errors(startMsg); len(lines) != 0 {
		t.Errorf("a start with every secret opening logged %v", lines)
	}
}

func mustKeys(t *testing.T, secret string) *secrets.Keys {
	t.Helper()
	k, err := secrets.New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// endpoint reads an endpoint's row as the dispatcher sees it.
func endpoint(t *testing.T, c *ent.Client, id string) *ent.WebhookEndpoint {
	t.Helper()
	ep, err := c.WebhookEndpoint.Get(sys(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}
