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

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/webhook"
)

// specialAddresses has one row per block of IANA's IPv4 and IPv6
// Special-Purpose Address Registries that is not globally reachable (and
// the few the guard refuses beyond them, docs/webhooks.md): an address
// inside it, and the block the refusal must name.
var specialAddresses = []struct{ addr, block string }{
	{"0.1.2.3", "0.0.0.0/8"},
	{"10.1.2.3", "10.0.0.0/8"},
	{"100.100.100.200", "100.64.0.0/10"},
	{"127.0.0.53", "127.0.0.0/8"},
	{"169.254.169.254", "169.254.0.0/16"},
	{"172.20.0.1", "172.16.0.0/12"},
	{"192.0.0.9", "192.0.0.0/24"},   // PCP anycast: refused with its /24
	{"192.0.0.170", "192.0.0.0/24"}, // NAT64 discovery
	{"192.0.2.10", "192.0.2.0/24"},
	{"192.88.99.1", "192.88.99.0/24"},
	{"192.168.1.1", "192.168.0.0/16"},
	{"198.19.0.1", "198.18.0.0/15"},
	{"198.51.100.7", "198.51.100.0/24"},
	{"203.0.113.7", "203.0.113.0/24"},
	{"224.0.0.251", "224.0.0.0/4"},
	{"239.255.255.250", "224.0.0.0/4"},
	{"240.0.0.1", "240.0.0.0/4"},
	{"255.255.255.255", "240.0.0.0/4"},
	{"::1", "::1/128"},
	{"::", "::/128"},
	{"::a00:1", "::/96"},
	{"::ffff:127.0.0.1", "127.0.0.0/8"}, // IPv4-mapped: the IPv4 address judged
	{"::ffff:169.254.169.254", "169.254.0.0/16"},
	{"::ffff:0:a00:1", "::ffff:0:0:0/96"},
	{"64:ff9b::808:808", "64:ff9b::/96"}, // NAT64 reaches 8.8.8.8 through the local gateway
	{"64:ff9b::a00:1", "64:ff9b::/96"},
	{"64:ff9b:1::1", "64:ff9b:1::/48"},
	{"100::1", "100::/64"},
	{"100:0:0:1::1", "100:0:0:1::/64"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/32"}, // Teredo
	{"2001:1::1", "2001::/23"},                            // PCP anycast
	{"2001:1::2", "2001::/23"},                            // TURN anycast
	{"2001:2::1", "2001:2::/48"},
	{"2001:3::1", "2001::/23"},     // AMT
	{"2001:4:112::1", "2001::/23"}, // AS112-v6
	{"2001:10::1", "2001:10::/28"},
	{"2001:20::1", "2001::/23"}, // ORCHIDv2
	{"2001:30::1", "2001::/23"}, // DETs
	{"2001:1ff::1", "2001::/23"},
	{"2001:db8::1", "2001:db8::/32"},
	{"2002:a00:1::1", "2002::/16"},
	{"2002:808:808::1", "2002::/16"},
	{"3fff::1", "3fff::/20"},
	{"3fff:fff::1", "3fff::/20"},
	{"5f00::1", "5f00::/16"},
	{"fc00::1", "fc00::/7"},
	{"fd12:3456::1", "fc00::/7"},
	{"fe80::1", "fe80::/10"},
	{"febf::1", "fe80::/10"},
	{"fec0::1", "fec0::/10"},
	{"feff::1", "fec0::/10"},
	{"ff02::1", "ff00::/8"},
	{"ff0e::1", "ff00::/8"},
	{"4000::1", "2000::/3"},
	{"1::1", "2000::/3"},
}

// publicAddresses are globally reachable: receivers may live there.
var publicAddresses = []string{
	"8.8.8.8",
	"93.184.215.14",
	"192.31.196.1",   // AS112-v4: globally reachable
	"192.52.193.1",   // AMT (IPv4): globally reachable
	"100.63.255.255", // just below 100.64.0.0/10
	"100.128.0.1",    // just above it
	"172.32.0.1",
	"198.20.0.1",
	"::ffff:8.8.8.8", // IPv4-mapped: judged as 8.8.8.8
	"2001:200::1",    // just past 2001::/23
	"2001:4860:4860::8888",
	"2001:db9::1",
	"2003::1",
	"2606:4700:4700::1111",
	"2620:4f:8000::1", // AS112 direct delegation: globally reachable
	"3fff:1000::1",    // just past 3fff::/20
}

// TestGuardBlocks: an address in each special-purpose block is refused, at
// registration (as an IP literal and through DNS) and at dial time, with a
// reason naming its block; globally reachable addresses are accepted.
// WEBHOOK_ALLOW_PRIVATE=true lifts the refusals.
func TestGuardBlocks(t *testing.T) {
	dns := map[string][]string{}
	name := func(addr string) string {
		return "h" + strings.NewReplacer(":", "-", ".", "-").Replace(addr) + ".example.com"
	}
	for _, tt := range specialAddresses {
		dns[name(tt.addr)] = []string{tt.addr}
	}
	for _, a := range publicAddresses {
		dns[name(a)] = []string{a}
	}
	g := webhook.NewGuard(false, stubDNS(dns))
	open := webhook.NewGuard(true, stubDNS(dns))
	ctx := context.Background()
	literal := func(addr string) string {
		if strings.Contains(addr, ":") {
			return "http://[" + addr + "]/hook"
		}
		return "http://" + addr + "/hook"
	}
	dialer := &net.Dialer{Timeout: time.Second}
	for _, tt := range specialAddresses {
		t.Run(tt.addr, func(t *testing.T) {
			want := tt.block
			for _, c := range []struct{ url, prefix string }{
				{literal(tt.addr), "points to a forbidden address: "},
				{"https://" + name(tt.addr) + "/hook", "host resolves to a forbidden address: "},
			} {
				var ue *webhook.URLError
				err := g.CheckURL(ctx, c.url)
				if !errors.As(err, &ue) || !strings.HasPrefix(ue.Reason, c.prefix) || !strings.Contains(ue.Reason, want) {
					t.Errorf("%s: err = %v, want %q… %q", c.url, err, c.prefix, want)
				}
				if err := open.CheckURL(ctx, c.url); err != nil {
					t.Errorf("%s with WEBHOOK_ALLOW_PRIVATE: %v", c.url, err)
				}
			}
			// At dial time: what DNS answered later does not matter, the
			// address connected to does.
			addr := netip.MustParseAddr(tt.addr)
			d := *dialer
			d.Control = webhook.NewGuard(false, nil).Control
			conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(addr, 9).String())
			if conn != nil {
				conn.Close()
			}
			var de *webhook.DialError
			if errors.As(err, &de) {
				if !errors.Is(err, webhook.ErrForbiddenAddress) || !strings.Contains(de.Reason, tt.block) {
					t.Errorf("dial: %v, want refused in %s", err, tt.block)
				}
			} else if !unroutable(err) {
				t.Errorf("dial: %v, want refused in %s", err, tt.block)
			}
		})
	}
	for _, a := range publicAddresses {
		t.Run("public "+a, func(t *testing.T) {
			for _, u := range []string{literal(a), "https://" + name(a) + "/hook"} {
				if err := g.CheckURL(ctx, u); err != nil {
					t.Errorf("%s refused: %v", u, err)
				}
			}
			if why := webhook.Reason(netip.MustParseAddr(a)); why != "" {
				t.Errorf("Reason = %q, want none", why)
			}
		})
	}
}

// unroutable reports whether a dial failed before the guard could see the
// socket: an address family or route this machine lacks (no IPv6 here).
func unroutable(err error) bool {
	var se *net.OpError
	if !errors.As(err, &se) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "address family not supported") || strings.Contains(msg, "network is unreachable") ||
		strings.Contains(msg, "cannot assign requested address")
}

// TestRegisterRefusesSpecialAddresses: POST and PUT /v1/webhooks refuse a
// URL in any special-purpose block with VALIDATION_ERROR on url, naming the
// block, through the real router; globally reachable ones are created.
func TestRegisterRefusesSpecialAddresses(t *testing.T) {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.WebhookAllowPrivate = false
		c.RateLimitPerMinute, c.RateLimitPerHour = 1000, 1000 // two requests a row
	}),
		testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = testDNS }))
	id, _ := register(t, env, env.Alice, "https://hooks.example.com/in")
	for _, tt := range specialAddresses {
		u := "http://" + tt.addr + "/hook"
		if strings.Contains(tt.addr, ":") {
			u = "http://[" + tt.addr + "]/hook"
		}
		want := testutil.Scenario{Status: http.StatusBadRequest, Code: "VALIDATION_ERROR",
			Contains: []string{`"field":"url"`, tt.block}}
		t.Run(tt.addr, func(t *testing.T) {
			want.Assert(t, env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
				Body: map[string]any{"url": u}}))
			want.Assert(t, env.Do(testutil.Request{Method: "PUT", Path: "/v1/webhooks/" + id, Token: env.Alice.Token,
				Body: map[string]any{"url": u}}))
		})
	}
	for _, a := range []string{"8.8.8.8", "[2001:4860:4860::8888]", "[2620:4f:8000::1]", "[::ffff:8.8.8.8]"} {
		t.Run("public "+a, func(t *testing.T) {
			r := env.Do(testutil.Request{Method: "POST", Path: "/v1/webhooks", Token: env.Alice.Token,
				Body: map[string]any{"url": "https://" + a + "/hook"}})
			if r.Status != http.StatusCreated {
				t.Errorf("%s: %d %s", a, r.Status, r.Body)
			}
		})
	}
}
