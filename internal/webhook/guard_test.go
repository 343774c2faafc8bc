package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// stubDNS answers from a fixed table, as a resolver an attacker controls
// might; unknown names do not resolve.
func stubDNS(table map[string][]string) webhook.LookupFunc {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range table[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

var testDNS = stubDNS(map[string][]string{
	"hooks.example.com":       {"93.184.215.14"},
	"v6.example.com":          {"2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	"loopback.example.com":    {"127.0.0.1"},
	"internal.example.com":    {"10.20.30.40"},
	"metadata.example.com":    {"169.254.169.254"},
	"mixed.example.com":       {"93.184.215.14", "192.168.1.10"},
	"v6-loopback.example.com": {"::1"},
})

// TestCheckURL: registration refuses what is not a public http(s) receiver.
func TestCheckURL(t *testing.T) {
	tests := []struct {
		url    string
		reason string // "" when accepted
	}{
		{"https://hooks.example.com/in", ""},
		{"http://hooks.example.com:8080/in?x=1", ""},
		{"https://v6.example.com/", ""},
		{"https://93.184.215.14/", ""},
		{"http://127.0.0.1/", "points to a forbidden address"},
		{"http://127.1.2.3:9000/", "points to a forbidden address"},
		{"http://10.0.0.1/", "points to a forbidden address"},
		{"http://10.255.255.255/", "points to a forbidden address"},
		{"http://172.16.0.1/", "points to a forbidden address"},
		{"http://172.31.255.254/", "points to a forbidden address"},
		{"http://192.168.0.1/", "points to a forbidden address"},
		{"http://169.254.169.254/latest/meta-data/", "points to a forbidden address"},
		{"http://[::1]/", "points to a forbidden address"},
		{"http://[::ffff:127.0.0.1]/", "points to a forbidden address"},
		{"http://[::127.0.0.1]/", "points to a forbidden address"},
		{"http://[::ffff:0:127.0.0.1]/", "points to a forbidden address"},
		{"http://[::ffff:0:a00:1]/", "points to a forbidden address"},
		{"http://[::8.8.8.8]/", "points to a forbidden address"},
		{"http://[fd00::1]/", "points to a forbidden address"},
		{"http://[fe80::1]/", "points to a forbidden address"},
		{"http://0.0.0.0/", "points to a forbidden address"},
		{"http://100.100.100.200/", "points to a forbidden address"},
		{"http://loopback.example.com/", "host resolves to a forbidden address"},
		{"http://internal.example.com/", "host resolves to a forbidden address"},
		{"http://metadata.example.com/", "host resolves to a forbidden address"},
		{"http://mixed.example.com/", "host resolves to a forbidden address"},
		{"http://v6-loopback.example.com/", "host resolves to a forbidden address"},
		{"http://nowhere.example.com/", "host could not be resolved"},
		{"ftp://hooks.example.com/", "must use http or https"},
		{"file:///etc/passwd", "must use http or https"},
		{"hooks.example.com/in", "must use http or https"},
		{"http:///path", "must name a host"},
		{"", "must not be empty"},
		{"http://hooks.example.com/" + string(make([]byte, webhook.MaxURLLen)), "at most"},
	}
	g := webhook.NewGuard(false, testDNS)
	for _, tt := range tests {
		t.Run(tt.url[:min(len(tt.url), 60)], func(t *testing.T) {
			err := g.CheckURL(context.Background(), tt.url)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ue *webhook.URLError
			if !errors.As(err, &ue) || !strings.Contains(ue.Reason, tt.reason) {
				t.Fatalf("err = %v, want a URLError saying %q", err, tt.reason)
			}
		})
	}
	t.Run("WEBHOOK_ALLOW_PRIVATE allows private receivers", func(t *testing.T) {
		open := webhook.NewGuard(true, testDNS)
		for _, u := range []string{"http://127.0.0.1:8080/", "http://[::1]/", "http://internal.example.com/", "http://localhost/"} {
			if err := open.CheckURL(context.Background(), u); err != nil {
				t.Errorf("%s: %v", u, err)
			}
		}
		if err := open.CheckURL(context.Background(), "ftp://x/"); err == nil {
			t.Error("ftp accepted with private addresses allowed")
		}
	})
}

// TestGuardTransportRefusesAtDial: a connection to a forbidden address is
// refused when it is dialled, whatever name led there, so DNS answering
// differently after registration (rebinding) gains nothing.
func TestGuardTransportRefusesAtDial(t *testing.T) {
	rc := newReceiver(t)
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	client := &http.Client{Transport: webhook.NewGuard(false, nil).Transport(), Timeout: 5 * time.Second}
	for _, u := range []string{rc.URL, "http://localhost:" + port + "/"} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: connected", u)
			continue
		}
		if !errors.Is(err, webhook.ErrForbiddenAddress) {
			t.Errorf("%s: err = %v, want ErrForbiddenAddress", u, err)
		}
	}
	if len(rc.got) != 0 {
		t.Errorf("the receiver got %d requests", len(rc.got))
	}
	open := &http.Client{Transport: webhook.NewGuard(true, nil).Transport(), Timeout: 5 * time.Second}
	resp, err := open.Get(rc.URL)
	if err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}
	resp.Body.Close()
}

// TestDispatcherRefusesRebound: an endpoint whose address became private
// after registration is not contacted; the attempt is logged as refused.
func TestDispatcherRefusesRebound(t *testing.T) {
	env := testutil.New(t, fastWebhooks(time.Hour), testutil.WithConfig(func(c *config.Config) {
		c.WebhookAllowPrivate = false
	}), testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = testDNS }))
	start(t, env)
	rc := newReceiver(t)
	epID, _ := register(t, env, env.Alice, "https://hooks.example.com/in")
	// DNS now answers with the receiver on loopback: model it by the URL the
	// dialler will reach.
	if err := env.App.DB.Client.WebhookEndpoint.UpdateOneID(epID).SetURL(rc.URL).Exec(sys()); err != nil {
		t.Fatal(err)
	}
	env.CreateItem(env.Alice, "x")
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		ds := deliveries(t, env.App.DB.Client, epID)
		return len(ds) == 1 && ds[0].Attempts == 1 && ds[0].ClaimedUntil == nil
	}) {
		t.Fatal("no attempt recorded")
	}
	d := deliveries(t, env.App.DB.Client, epID)[0]
	if d.State != delivery.StatePending || d.LastStatusCode != nil || !strings.Contains(d.LastError, "refused") ||
		!strings.Contains(d.LastError, "127.0.0.0/8 loopback") {
		t.Errorf("state %s, status %v, error %q; want a refused attempt naming the block", d.State, d.LastStatusCode, d.LastError)
	}
	if len(rc.got) != 0 {
		t.Errorf("the receiver was contacted %d times", len(rc.got))
	}
}
