package e2e_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestGraphQLOverHTTPAudit runs graphql-http's server audit, the
// GraphQL-over-HTTP specification's own suite (audit.test.mjs), against the
// real server, anonymously and with a bearer token: any warning (a failed
// SHOULD) or error (a failed MUST) fails it. The server runs as the binary
// does with its defaults (the playground on, so anonymous introspection
// works), except for the rate limits: the suite sends about 70 requests a
// run, past the 30 points a minute an anonymous client has. It runs with
// E2E=1 (make e2e, CI), where a missing node_modules fails it.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	requireE2E(t, "node_modules/graphql-http")
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.Playground = true
		c.GraphQLAnonPerMinute = 10_000
		c.RateLimitPerMinute = 10_000
		c.RateLimitPerHour = 100_000
	}))
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "audit.test.mjs")
	cmd.Env = append(os.Environ(), "BASE_URL="+srv.URL, "ALICE_TOKEN="+env.Alice.Token)
	output, err := cmd.CombinedOutput()
	t.Logf("node audit.test.mjs:\n%s", output)
	if err != nil {
		t.Fatalf("the GraphQL-over-HTTP audit failed: %v", err)
	}
}
