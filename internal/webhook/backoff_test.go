package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestJitterStaysWithinTenPercent(t *testing.T) {
	for _, d := range []time.Duration{5 * time.Second, 5 * time.Minute, 24 * time.Hour} {
		lo, hi := d, d
		for range 1000 {
			j := jitter(d)
			lo, hi = min(lo, j), max(hi, j)
		}
		if lo < d*9/10 || hi > d*11/10 || lo == hi {
			t.Errorf("jitter(%s) ranged %s..%s, want spread within ±10%%", d, lo, hi)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		value  string
		want   time.Duration
		ok     bool
	}{
		{"seconds on 429", 429, "120", 2 * time.Minute, true},
		{"seconds on 503", 503, "30", 30 * time.Second, true},
		{"HTTP date", 503, now.Add(time.Hour).Format(http.TimeFormat), time.Hour, true},
		{"date in the past", 429, now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"capped at a day", 429, "9999999", 24 * time.Hour, true},
		{"ignored on 500", 500, "120", 0, false},
		{"absent", 429, "", 0, false},
		{"negative", 429, "-5", 0, false},
		{"garbage", 429, "soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.value != "" {
				h.Set("Retry-After", tt.value)
			}
			got, ok := retryAfter(tt.status, h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter = %s, %v; want %s, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSignIsStandardWebhooks(t *testing.T) {
	// The example of the Standard Webhooks specification.
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	got, err := Sign(id, time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), secret)
	if err != nil || got != want {
		t.Errorf("Sign = %q, %v; want %q", got, err, want)
	}
	if _, err := Sign(id, time.Now(), nil); err == nil {
		t.Error("signed without a secret")
	}
}
