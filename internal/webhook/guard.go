package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
	"unicode/utf8"
)

// MaxURLLen bounds a receiver URL.
const MaxURLLen = 2048

// ErrForbiddenAddress is returned when a receiver resolves, or connects, to
// an address the server must not reach on a client's behalf.
var ErrForbiddenAddress = errors.New("loopback, private, link-local and metadata addresses are not allowed")

// LookupFunc resolves a host name to its addresses; tests stub it, production
// uses net.DefaultResolver.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// Guard keeps webhook requests away from the server's own networks: it checks
// a URL's addresses at registration and, because DNS can answer differently
// later (rebinding), the address actually dialled on every attempt.
type Guard struct {
	allowPrivate bool
	lookup       LookupFunc
}

// NewGuard returns a guard; allowPrivate (WEBHOOK_ALLOW_PRIVATE) turns the
// address checks off. A nil lookup uses the system resolver.
func NewGuard(allowPrivate bool, lookup LookupFunc) *Guard {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return &Guard{allowPrivate: allowPrivate, lookup: lookup}
}

// URLError says why a receiver URL is refused, in words fit for a client.
type URLError struct{ Reason string }

// Error implements error.
func (e *URLError) Error() string { return e.Reason }

// CheckURL validates a receiver URL: http or https, a host, a sane length,
// and unless private addresses are allowed, no address of the host may be
// forbidden. It returns a *URLError for anything the client must fix.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	if raw == "" {
		return &URLError{"must not be empty"}
	}
	if !utf8.ValidString(raw) || len(raw) > MaxURLLen {
		return &URLError{fmt.Sprintf("must be a valid URL of at most %d bytes", MaxURLLen)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return &URLError{"must be an absolute http or https URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &URLError{"must use http or https"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{"must name a host"}
	}
	if g.allowPrivate {
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if Forbidden(addr) {
			return &URLError{"points to a forbidden address: " + ErrForbiddenAddress.Error()}
		}
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.lookup(lctx, host)
	if err != nil || len(addrs) == 0 {
		return &URLError{"host could not be resolved"}
	}
	for _, a := range addrs {
		if Forbidden(a) {
			return &URLError{"host resolves to a forbidden address: " + ErrForbiddenAddress.Error()}
		}
	}
	return nil
}

// control is the dialer's last word: it sees the IP address about to be
// connected, after DNS, and refuses a forbidden one.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	if Forbidden(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", ap.Addr(), ErrForbiddenAddress)
	}
	return nil
}

// Transport returns an HTTP transport whose every connection passes the
// guard. It ignores proxy settings: a proxy would dial for us, unchecked.
func (g *Guard) Transport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// forbiddenPrefixes are ranges beyond what netip's predicates name: "this
// network", carrier-grade NAT (cloud-internal services live there), IETF
// protocol assignments, benchmarking, reserved, and the IPv6 forms that can
// embed an IPv4 address: IPv4-compatible (::/96, deprecated, and routed to
// the embedded address by some stacks), IPv4-translated (::ffff:0:0/96),
// NAT64 and 6to4.
var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
}

// Forbidden reports whether addr is loopback, private (RFC 1918, ULA),
// link-local (which holds the 169.254.169.254 metadata service), unspecified,
// multicast or in another range a public receiver never has.
func Forbidden(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() ||
		addr.IsMulticast() {
		return true
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
