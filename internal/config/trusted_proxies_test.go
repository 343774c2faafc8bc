package config

import (
	"flag"
	"strings"
	"testing"
)

// TestTrustedProxies accepts addresses and CIDRs and refuses anything else
// at start, with the variable named, rather than trusting a proxy by mistake.
func TestTrustedProxies(t *testing.T) {
	tests := []struct {
		value   string
		wantErr bool
	}{
		{"", false},
		{"10.0.0.1", false},
		{"10.0.0.0/8, 192.168.1.0/24", false},
		{"::1,fd00::/8", false},
		{"proxy.internal", true},
		{"10.0.0.0/33", true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			var c Config
			l := c.Register(flag.NewFlagSet("test", flag.ContinueOnError))
			err := l.Resolve(func(k string) (string, bool) {
				if k == "TRUSTED_PROXIES" {
					return tt.value, true
				}
				return "", false
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
				t.Errorf("error does not name the variable: %v", err)
			}
		})
	}
}
