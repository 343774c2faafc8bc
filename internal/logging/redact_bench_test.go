package logging_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/acme/itemsvc/internal/logging"
)

// BenchmarkAccessLine is the cost of the redactor on the line every request
// writes (nothing to redact), against the JSON handler alone.
func BenchmarkAccessLine(b *testing.B) {
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{
		{"json", slog.NewJSONHandler(io.Discard, nil)},
		{"redacting", logging.Redacting(slog.NewJSONHandler(io.Discard, nil))},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := slog.New(c.h)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("request_id", "01m88gqce2mfxca5es0zznd1sz"), slog.String("method", "POST"),
					slog.String("route", "/graphql"), slog.Int("status", 200), slog.Float64("duration_ms", 1.234),
					slog.Int("bytes", 1234), slog.String("user_id", "user_01m88gqce2mfxca5es0zznd1sz"),
					slog.String("key_id", "key_01m88gqce2mfxca5es0zznd1sz"))
			}
		})
	}
}
