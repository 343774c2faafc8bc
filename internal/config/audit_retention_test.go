package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// TestAuditRetention: AUDIT_RETENTION defaults to 8760h, takes a duration
// from the variable or the flag (the flag wins), 0 keeps records forever,
// and a value that is not a duration, is negative or is shorter than a
// minute is refused at start, naming the variable.
func TestAuditRetention(t *testing.T) {
	tests := []struct {
		name    string
		env     string // "": unset
		flag    string // "": not given
		want    time.Duration
		wantErr bool
	}{
		{"default", "", "", 8760 * time.Hour, false},
		{"variable", "2160h", "", 2160 * time.Hour, false},
		{"flag wins", "2160h", "48h", 48 * time.Hour, false},
		{"zero: forever", "0", "", 0, false},
		{"shortest", "1m", "", time.Minute, false},
		{"too short", "30s", "", 0, true},
		{"not a duration", "1 year", "", 0, true},
		{"negative", "-1h", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			l := c.Register(fs)
			var args []string
			if tt.flag != "" {
				args = []string{"-audit-retention", tt.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err := l.Resolve(func(k string) (string, bool) {
				if k == "AUDIT_RETENTION" && tt.env != "" {
					return tt.env, true
				}
				return "", false
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "AUDIT_RETENTION") {
					t.Errorf("error does not name the variable: %v", err)
				}
				return
			}
			if c.AuditRetention != tt.want {
				t.Errorf("AuditRetention = %s, want %s", c.AuditRetention, tt.want)
			}
		})
	}
}
