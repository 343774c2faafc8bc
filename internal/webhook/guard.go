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
var ErrForbiddenAddress = errors.New("loopback, private, link-local, metadata and other special-purpose addresses are not allowed")

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
		if why := Reason(addr); why != "" {
			return &URLError{fmt.Sprintf("points to a forbidden address: %s is %s", addr, why)}
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
		if why := Reason(a); why != "" {
			return &URLError{fmt.Sprintf("host resolves to a forbidden address: %s is %s", a, why)}
		}
	}
	return nil
}

// Control is the dialer's last word (net.Dialer.Control): it sees the IP
// address about to be connected, after DNS, and refuses a forbidden one
// with a *DialError.
func (g *Guard) Control(_, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	if why := Reason(ap.Addr()); why != "" {
		return &DialError{Addr: ap.Addr(), Reason: why}
	}
	return nil
}

// DialError is the guard's refusal of a connection: the address dialled and
// why it is refused (Reason). It is an ErrForbiddenAddress.
type DialError struct {
	Addr   netip.Addr
	Reason string
}

// Error implements error.
func (e *DialError) Error() string {
	return fmt.Sprintf("dial %s: %s: %v", e.Addr, e.Reason, ErrForbiddenAddress)
}

// Unwrap makes a DialError an ErrForbiddenAddress for errors.Is.
func (e *DialError) Unwrap() error { return ErrForbiddenAddress }

// Transport returns an HTTP transport whose every connection passes the
// guard. It ignores proxy settings: a proxy would dial for us, unchecked.
func (g *Guard) Transport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.Control}
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

// Block is a range of addresses the guard refuses, with its name in IANA's
// special-purpose registries (or why it is refused), for the refusal's
// message.
type Block struct {
	Prefix netip.Prefix
	Name   string
}

// Blocks are the ranges refused as receivers: every block of IANA's IPv4
// and IPv6 Special-Purpose Address Registries that is not globally
// reachable, the IPv6 forms that carry an IPv4 address onward (NAT64,
// 6to4, IPv4-compatible), multicast and site-local. Two choices go past the
// registries (docs/webhooks.md):
//   - 192.0.0.0/24 and 2001::/23, the IETF protocol assignments, are refused
//     whole, although the registry marks a few of their sub-blocks globally
//     reachable: the PCP, TURN and DNS-SD anycast addresses (192.0.0.9,
//     192.0.0.10, 2001:1::1-3) reach the service nearest the server, often
//     its own gateway; AMT (2001:3::/32) is relay discovery; AS112-v6
//     (2001:4:112::/48) sinks DNS; ORCHIDv2 (2001:20::/28) and DETs
//     (2001:30::/28) are identifiers, not locators. No receiver lives there.
//   - 64:ff9b::/96, NAT64's well-known prefix, is refused although globally
//     reachable: the local NAT64 gateway forwards it to the embedded IPv4
//     address, private or not. IPv4-mapped addresses (::ffff:0:0/96) are
//     judged by the IPv4 address they carry, as the dialer connects to it.
//
// An IPv6 address outside 2000::/3, the only space IANA allocates for
// global unicast, is refused too (see Reason).
var Blocks = []Block{
	// IPv4 (RFC 6890 and its updates).
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private-use"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (carrier-grade NAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private-use"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast (deprecated)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private-use"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("255.255.255.255/32"), "limited broadcast"},
	// IPv6 (RFC 6890, 8190 and the registry's later entries).
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 well-known prefix"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 local-use prefix"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy prefix"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking"},
	{netip.MustParsePrefix("2001:10::/28"), "ORCHID (deprecated)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("5f00::/16"), "SRv6 SIDs"},
	{netip.MustParsePrefix("fc00::/7"), "unique local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// globalUnicast is the IPv6 space IANA allocates to the registries for
// global unicast; the rest is unassigned or reserved by the IETF.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// Forbidden reports whether addr may not be a receiver's address.
func Forbidden(addr netip.Addr) bool { return Reason(addr) != "" }

// Reason says why addr may not be a receiver's address, naming its block
// ("in fec0::/10 site-local (deprecated)"), or is "" when it may. An
// IPv4-mapped address is judged by the IPv4 address it carries.
func Reason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not an IP address"
	}
	addr = addr.Unmap().WithZone("")
	for _, b := range Blocks {
		if b.Prefix.Contains(addr) {
			return "in " + b.Prefix.String() + " " + b.Name
		}
	}
	if addr.Is6() && !globalUnicast.Contains(addr) {
		return "outside 2000::/3, the global unicast space"
	}
	return ""
}
