package tracing

import (
	"context"
	"strings"
	"testing"
)

// TestFromEnv: tracing is off unless the variables ask for it, each
// supported value switches it on as the specification says, and an
// unsupported value is an error naming its variable.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		on       bool
		sampling bool
		err      string
	}{
		{name: "nothing set", env: nil},
		{name: "only a service name", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true, sampling: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true, sampling: true},
		{name: "exporter otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, sampling: true},
		{name: "exporter none beats an endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}},
		{name: "grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true, sampling: true},
		{name: "traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "bogus", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true, sampling: true},
		{name: "always_off never samples", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "always_off"}, on: true},
		{name: "ratio 0 never samples", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}, on: true},
		{name: "parent-based ratio 0 follows sampled parents", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}, on: true, sampling: true},
		{name: "propagators", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_PROPAGATORS": "tracecontext"}, on: true, sampling: true},
		{name: "bad exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER"},
		{name: "bad protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{name: "bad sampler", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "sometimes"}, err: "OTEL_TRACES_SAMPLER"},
		{name: "bad ratio", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, err: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "bad propagator", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_PROPAGATORS": "b3"}, err: "OTEL_PROPAGATORS"},
		{name: "bad disabled", env: map[string]string{"OTEL_SDK_DISABLED": "maybe"}, err: "OTEL_SDK_DISABLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := fromEnv(context.Background(), func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if (tr != nil) != tc.on {
				t.Fatalf("on = %v, want %v", tr != nil, tc.on)
			}
			if tr == nil {
				return
			}
			defer tr.Shutdown(context.Background())
			if tr.Sampling() != tc.sampling {
				t.Errorf("sampling = %v, want %v", tr.Sampling(), tc.sampling)
			}
		})
	}
}

// TestStatementNames: a statement's span tells its kind and first table,
// and never a value.
func TestStatementNames(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"SELECT `items`.`id` FROM `items` WHERE `items`.`id` = ?", "SELECT items"},
		{`SELECT "items"."id" FROM "items" WHERE "items"."id" = $1`, "SELECT items"},
		{"INSERT INTO `events` (`created_at`) VALUES (?)", "INSERT events"},
		{`UPDATE "item_counts" SET "n" = "n" + 1`, "UPDATE item_counts"},
		{"DELETE FROM idempotency_keys WHERE expires_at < ?", "DELETE idempotency_keys"},
		{"SELECT COUNT(*) FROM (SELECT * FROM items) AS t", "SELECT items"},
		{"SELECT pg_advisory_xact_lock($1)", "SELECT"},
		{"SELECT * FROM 'secret value'", "SELECT"},
		{"'; DROP TABLE x", "SQL"},
		{"", "SQL"},
	} {
		if got := spanName(context.Background(), "sql.conn.query", tc.query); got != tc.want {
			t.Errorf("spanName(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}
