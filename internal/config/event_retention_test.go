package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// TestEventRetention: EVENT_RETENTION defaults to 720h, takes a duration from
// the variable or the flag (the flag wins), and refuses at start, naming the
// variable, a value that is not a duration or is shorter than a minute.
func TestEventRetention(t *testing.T) {
	tests := []struct {
		name    string
		env     string // "": unset
		flag    string // "": not given
		want    time.Duration
		wantErr bool
	}{
		{"default", "", "", 720 * time.Hour, false},
		{"variable", "168h", "", 168 * time.Hour, false},
		{"flag wins", "168h", "48h", 48 * time.Hour, false},
		{"shortest", "1m", "", time.Minute, false},
		{"too short", "30s", "", 0, true},
		{"not a duration", "30 days", "", 0, true},
		{"zero", "0", "", 0, true},
		{"negative", "-1h", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			l := c.Register(fs)
			var args []string
			if tt.flag != "" {
				args = []string{"-event-retention", tt.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err := l.Resolve(func(k string) (string, bool) {
				if k == "EVENT_RETENTION" && tt.env != "" {
					return tt.env, true
				}
				return "", false
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "EVENT_RETENTION") {
					t.Errorf("error does not name the variable: %v", err)
				}
				return
			}
			if c.EventRetention != tt.want {
				t.Errorf("EventRetention = %s, want %s", c.EventRetention, tt.want)
			}
		})
	}
}
