package config

import (
	"flag"
	"strings"
	"testing"
)

// TestMaxKeysPerUser: MAX_KEYS_PER_USER defaults to 20, takes a whole
// number from its variable or its flag (the flag wins), 0 turns the cap
// off, and a negative or non-numeric value is refused at start, naming the
// variable.
func TestMaxKeysPerUser(t *testing.T) {
	tests := []struct {
		name    string
		env     string // "": unset
		flag    string // "": not given
		want    int
		wantErr bool
	}{
		{"default", "", "", 20, false},
		{"variable", "5", "", 5, false},
		{"flag wins", "5", "50", 50, false},
		{"zero: no cap", "0", "", 0, false},
		{"negative", "-1", "", 0, true},
		{"not a number", "many", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			l := c.Register(fs)
			var args []string
			if tt.flag != "" {
				args = []string{"-max-keys-per-user", tt.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err := l.Resolve(func(k string) (string, bool) {
				if k == "MAX_KEYS_PER_USER" && tt.env != "" {
					return tt.env, true
				}
				return "", false
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "MAX_KEYS_PER_USER") {
					t.Errorf("error does not name the variable: %v", err)
				}
				return
			}
			if c.MaxKeysPerUser != tt.want {
				t.Errorf("MaxKeysPerUser = %d, want %d", c.MaxKeysPerUser, tt.want)
			}
		})
	}
}
