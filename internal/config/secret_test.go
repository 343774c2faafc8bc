package config

import (
	"flag"
	"strings"
	"testing"
)

// TestServerSecrets: SECRET_KEY and JWT_SECRET are refused at start when
// they can be guessed: shorter than 32 bytes, the placeholder the
// Kubernetes example ships, a run, a pattern or a phrase. Random values in
// hex or base64 are accepted. A refusal names the variable, says how to
// make a good value, and never repeats the bad one.
func TestServerSecrets(t *testing.T) {
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"placeholder of the manifest", "replace-with-the-output-of-openssl-rand-hex-32", false},
		{"placeholder in capitals", "REPLACE-WITH-THE-OUTPUT-OF-OPENSSL-RAND-HEX-32", false},
		{"short", "3f9a1c", false},
		{"one character", strings.Repeat("s", 48), false},
		{"a sequence", "0123456789abcdef0123456789abcdef0123456789abcdef", false},
		{"a phrase", "this is my very long secret for the production server", false},
		{"a repeated word", "Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3xx", false},
		{"good hex (openssl rand -hex 32)", "9c4b0e7d2f86a1b35e0d47c9f2a86b13d5e7f90a2c4b6d8e1f3a5c7e9b0d2f41", true},
		{"good base64 (openssl rand -base64 32)", "q7Zr1Kx0pW9mV4cB2nJ8sT6yH3dF5gL0aE1uR7iO9wM=", true},
	}
	for _, variable := range []string{"SECRET_KEY", "JWT_SECRET"} {
		for _, tt := range tests {
			t.Run(variable+"/"+tt.name, func(t *testing.T) {
				var c Config
				fs := flag.NewFlagSet("test", flag.ContinueOnError)
				err := c.Register(fs).Resolve(func(k string) (string, bool) {
					if k == variable {
						return tt.value, true
					}
					return "", false
				})
				if (err == nil) != tt.ok {
					t.Fatalf("err = %v, want accepted %v", err, tt.ok)
				}
				if err == nil {
					return
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, variable+": ") || !strings.Contains(msg, "openssl rand -hex 32") {
					t.Errorf("error %q does not name %s and say how to make a value", msg, variable)
				}
				if strings.Contains(strings.ToLower(msg), strings.ToLower(tt.value)) {
					t.Errorf("error %q repeats the value", msg)
				}
				if strings.Count(msg, variable) != 1 {
					t.Errorf("error %q: want one message for the one bad value", msg)
				}
			})
		}
	}
}
