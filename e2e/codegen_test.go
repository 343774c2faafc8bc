package e2e_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/ent/apikey"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/testutil"
)

// codegenCommands are the recipe's commands (docs/clients.md shows them,
// TestClientsDocShowsRecipe holds it to that), run in a copy of codegen/
// with BASE, TOKEN and API_KEY set: the GraphQL client from the live schema,
// the REST types from the live OpenAPI description, the script
// type-checked, then compiled and run against the server.
var codegenCommands = []string{
	"GRAPHQL_URL=$BASE/graphql npx graphql-codegen --config codegen.yml",
	"npx openapi-typescript $BASE/v1/openapi.json --output rest.ts",
	"npx tsc -p tsconfig.json --strict --noEmit",
	"npx tsc -p tsconfig.json --strict --noEmit false --outDir out",
	`node --input-type=module -e "await (await import('./out/client.js')).run(process.env.BASE, process.env.API_KEY)"`,
	`node --input-type=module -e "const page = await (await fetch(process.env.BASE + '/v1/events?limit=2', { headers: { Authorization: 'Bearer ' + process.env.TOKEN } })).json(); await (await import('./out/subscribe.js')).follow(process.env.BASE, process.env.TOKEN, 1, page.data[1].id)"`,
	refusedFollow,
}

// refusedFollow follows without a token: the refusal is printed as the
// SubscriptionError the recipe turns graphql-ws's CloseEvent into.
const refusedFollow = `node --input-type=module -e "await (await import('./out/subscribe.js')).follow(process.env.BASE, '', 1).catch((e) => console.log(e.name, e.code, e.message))"`

// TestTypedClients generates both typed clients of docs/clients.md from the
// live server and compiles codegen/client.ts against them with tsc --strict:
// a login, items created and listed through openapi-fetch, typed GraphQL
// documents, and a createItem with an empty input that must stay a type
// error (its @ts-expect-error fails the compile once it type-checks). Then
// it runs the script against the server, so the types are shown to describe
// what the server answers, not only to compile. The server has the
// playground off, as in production, so the schema is read by introspection
// with a bearer token. Last, the two pitfalls the recipe's configuration
// avoids are shown to fail. It runs with E2E=1 (make e2e, CI), where a
// missing node_modules fails it.
func TestTypedClients(t *testing.T) {
	requireE2E(t, "node_modules/.bin/graphql-codegen", "node_modules/.bin/openapi-typescript", "node_modules/.bin/tsc")
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) { c.Playground = false }))
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)
	vars := []string{"BASE=" + srv.URL, "TOKEN=" + env.Alice.Token, "API_KEY=" + env.Alice.Key}

	ctx := testutil.SystemContext(t)
	before, err := env.App.DB.Client.User.Get(ctx, env.Alice.UserID)
	if err != nil {
		t.Fatal(err)
	}
	dir := clientProject(t, nil)
	for _, c := range codegenCommands {
		out, err := runIn(dir, c, vars)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		if c == refusedFollow && !strings.HasPrefix(out, "SubscriptionError 4403 the server closed the subscription (4403") {
			t.Errorf("follow without a token printed %q, want the SubscriptionError with its code 4403", out)
		}
	}
	// run() leaves Alice's account as it found it: her name, no key but the
	// test's own still active, none of the items it made.
	after, err := env.App.DB.Client.User.Get(ctx, env.Alice.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Name != before.Name {
		t.Errorf("run renamed its user: %q, was %q", after.Name, before.Name)
	}
	keys, err := env.App.DB.Client.APIKey.Query().Where(apikey.UserID(env.Alice.UserID), apikey.RevokedAtIsNil()).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].ID != env.Alice.KeyID {
		t.Errorf("after run, Alice has %d active keys, want only the test's", len(keys))
	}
	if n, err := env.App.DB.Client.Item.Query().Where(item.UserID(env.Alice.UserID)).Count(ctx); err != nil || n != 0 {
		t.Errorf("after run, Alice has %d items (%v), want none", n, err)
	}

	// Each of these changes to the recipe fails the compile with the error
	// docs/clients.md names: the two pitfalls its codegen.yml avoids, and the
	// empty createItem input once its @ts-expect-error is taken away (so the
	// directive is met by that error and no other).
	for _, c := range []struct {
		name, file, from, to, want string
	}{
		{"typescript plugins beside the client preset", "codegen.yml", "    preset: client\n",
			"    preset: client\n    plugins: [typescript, typescript-operations]\n", "error TS2300: Duplicate identifier"},
		{"relative imports without an extension under nodenext", "codegen.yml", "      importExtension: .js\n", "",
			"error TS2835: Relative import paths need explicit file extensions"},
		{"createItem with an empty input", "client.ts", "  // @ts-expect-error createItem(input: {}): CreateItemInput.name is required\n", "",
			"error TS2741: Property 'name' is missing in type '{}' but required in type 'CreateItemInput'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := clientProject(t, func(name string, b []byte) []byte {
				if name != c.file {
					return b
				}
				if !strings.Contains(string(b), c.from) {
					t.Fatalf("%s has no %q", name, c.from)
				}
				return []byte(strings.Replace(string(b), c.from, c.to, 1))
			})
			var out string
			var err error
			for _, line := range codegenCommands {
				if out, err = runIn(dir, line, vars); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(out, c.want) {
				t.Fatalf("want a failure with %q, got %v:\n%s", c.want, err, out)
			}
		})
	}
}

// clientProject copies codegen/ into a temporary directory, each file through
// edit when it is not nil, with e2e's node_modules linked in.
func clientProject(t *testing.T, edit func(name string, b []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("codegen")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("codegen", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(e.Name(), b)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	modules, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runIn runs a command line of the recipe in dir with vars added to the
// environment, and returns what it printed.
func runIn(dir, line string, vars []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), vars...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
