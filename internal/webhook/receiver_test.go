package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
)

// received is one request as the test receiver saw it.
type received struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
}

// payload decodes the body of a delivery.
func (r received) payload(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("delivery body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// receiver is a real HTTP server standing in for a customer's endpoint. Every
// request lands on got; answer decides the response (default 204).
type receiver struct {
	*httptest.Server
	got chan received

	mu     sync.Mutex
	answer func(r *http.Request) (int, http.Header)
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan received, 10000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.got <- received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()}
	rc.mu.Lock()
	answer := rc.answer
	rc.mu.Unlock()
	status, h := http.StatusNoContent, http.Header(nil)
	if answer != nil {
		status, h = answer(r)
	}
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
}

// setAnswer changes how the receiver answers from now on.
func (rc *receiver) setAnswer(f func(r *http.Request) (int, http.Header)) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

// hanging is a receiver that never answers: each request waits until the
// test ends (or the dispatcher gives up). It counts the requests in flight
// and the most it saw at once.
type hanging struct {
	*httptest.Server
	arrived chan struct{}
	release chan struct{}

	mu             sync.Mutex
	inFlight, most int
}

func newHanging(t testing.TB) *hanging {
	t.Helper()
	h := &hanging{arrived: make(chan struct{}, 10000), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.inFlight++
		h.most = max(h.most, h.inFlight)
		h.mu.Unlock()
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() { close(h.release); h.Close() })
	return h
}

// counts returns the requests in flight and the most seen at once.
func (h *hanging) counts() (inFlight, most int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, h.most
}

// waitFor returns the first request that match accepts, dropping others; it
// fails the test after timeout.
func (rc *receiver) waitFor(t testing.TB, timeout time.Duration, match func(received) bool) received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case r := <-rc.got:
			if match(r) {
				return r
			}
		case <-deadline:
			t.Fatalf("the receiver got no matching delivery within %s", timeout)
			return received{}
		}
	}
}

// waitAll returns, in order, one request for each matcher, whatever order
// they arrive in; others are dropped.
func (rc *receiver) waitAll(t testing.TB, timeout time.Duration, matchers ...func(received) bool) []received {
	t.Helper()
	out := make([]received, len(matchers))
	found := make([]bool, len(matchers))
	for left := len(matchers); left > 0; {
		r := rc.waitFor(t, timeout, func(r received) bool {
			for i, m := range matchers {
				if !found[i] && m(r) {
					return true
				}
			}
			return false
		})
		for i, m := range matchers {
			if !found[i] && m(r) {
				out[i], found[i] = r, true
				left--
				break
			}
		}
	}
	return out
}

// eventIs matches a delivery of an event type about an item.
func eventIs(typ, itemID string) func(received) bool {
	return func(r received) bool {
		var p struct {
			Event string `json:"event"`
			Data  struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		return json.Unmarshal(r.Body, &p) == nil && p.Event == typ && p.Data.ID == itemID
	}
}

// fastWebhooks makes deliveries quick to observe: local receivers allowed,
// short retries, a fast poll, no jitter.
func fastWebhooks(schedule ...time.Duration) testutil.Option {
	if len(schedule) == 0 {
		schedule = []time.Duration{20 * time.Millisecond, 40 * time.Millisecond}
	}
	return func(c *config.Config, o *app.Options) {
		c.WebhookAllowPrivate = true
		c.WebhookRetrySchedule = schedule
		o.Webhooks.PollInterval = 10 * time.Millisecond
		o.Webhooks.Jitter = func(d time.Duration) time.Duration { return d }
		o.Webhooks.DrainTimeout = 100 * time.Millisecond
	}
}

// start runs the env's workers (the dispatcher) until the test ends.
func start(t testing.TB, env *testutil.Env) {
	t.Helper()
	env.App.Start(context.Background())
}

// register creates an endpoint through the API and returns its id and secret.
func register(t testing.TB, env *testutil.Env, as testutil.Actor, url string, events ...string) (id, secret string) {
	t.Helper()
	body := map[string]any{"url": url}
	if events != nil {
		body["events"] = events
	}
	res := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: as.Token, Body: body})
	if res.Status != http.StatusCreated {
		t.Fatalf("register webhook: %d %s", res.Status, res.Body)
	}
	var w struct{ ID, Secret string }
	res.Data(t, &w)
	return w.ID, w.Secret
}

// verify checks a delivery's signature with the Standard Webhooks library.
func verify(t testing.TB, secret string, r received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	if err := wh.Verify(r.Body, r.Header); err != nil {
		t.Errorf("signature does not verify: %v\nheaders %v", err, r.Header)
	}
}

// sys is a context that acts as the system, past privacy (for assertions on
// the outbox and deliveries).
func sys() context.Context {
	return privacy.DecisionContext(context.Background(), privacy.Allow)
}

// as is a context that acts as an actor, for direct service-layer calls.
func as(a testutil.Actor, admin bool) context.Context {
	role := viewer.RoleUser
	if admin {
		role = viewer.RoleAdmin
	}
	return viewer.NewContext(context.Background(), viewer.Viewer{UserID: a.UserID, KeyID: a.KeyID, Role: role})
}

// deliveries returns every delivery of an endpoint.
func deliveries(t testing.TB, c *ent.Client, endpointID string) []*ent.Delivery {
	t.Helper()
	ds, err := c.Delivery.Query().Where(delivery.EndpointID(endpointID)).WithAttemptLog().All(sys())
	if err != nil {
		t.Fatalf("query deliveries: %v", err)
	}
	return ds
}
