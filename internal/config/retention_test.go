package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// TestRetention: EVENT_RETENTION defaults to 720h and AUDIT_RETENTION to
// 8760h; each takes a duration from its variable or its flag (the flag
// wins), AUDIT_RETENTION=0 keeps records forever (the events must go), and
// a value that is not a duration, is negative or is shorter than a minute
// is refused at start, naming the variable.
func TestRetention(t *testing.T) {
	settings := []struct {
		env, flag string
		got       func(Config) time.Duration
	}{
		{"EVENT_RETENTION", "event-retention", func(c Config) time.Duration { return c.EventRetention }},
		{"AUDIT_RETENTION", "audit-retention", func(c Config) time.Duration { return c.AuditRetention }},
	}
	tests := []struct {
		setting int
		name    string
		env     string // "": unset
		flag    string // "": not given
		want    time.Duration
		wantErr bool
	}{
		{0, "default", "", "", 720 * time.Hour, false},
		{0, "variable", "168h", "", 168 * time.Hour, false},
		{0, "flag wins", "168h", "48h", 48 * time.Hour, false},
		{0, "shortest", "1m", "", time.Minute, false},
		{0, "too short", "30s", "", 0, true},
		{0, "not a duration", "30 days", "", 0, true},
		{0, "zero", "0", "", 0, true},
		{0, "negative", "-1h", "", 0, true},
		{1, "default", "", "", 8760 * time.Hour, false},
		{1, "variable", "2160h", "", 2160 * time.Hour, false},
		{1, "flag wins", "2160h", "48h", 48 * time.Hour, false},
		{1, "zero: forever", "0", "", 0, false},
		{1, "shortest", "1m", "", time.Minute, false},
		{1, "too short", "30s", "", 0, true},
		{1, "not a duration", "1 year", "", 0, true},
		{1, "negative", "-1h", "", 0, true},
	}
	for _, tt := range tests {
		s := settings[tt.setting]
		t.Run(s.env+" "+tt.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			l := c.Register(fs)
			var args []string
			if tt.flag != "" {
				args = []string{"-" + s.flag, tt.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err := l.Resolve(func(k string) (string, bool) {
				if k == s.env && tt.env != "" {
					return tt.env, true
				}
				return "", false
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), s.env) {
					t.Errorf("error does not name the variable: %v", err)
				}
				return
			}
			if got := s.got(c); got != tt.want {
				t.Errorf("%s = %s, want %s", s.env, got, tt.want)
			}
		})
	}
}
