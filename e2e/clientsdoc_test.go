package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recipePackages are the npm packages docs/clients.md has a client install,
// each at the version e2e/package.json pins for TestTypedClients.
var recipePackages = []string{
	"@graphql-codegen/cli", "@graphql-codegen/client-preset", "graphql", "openapi-typescript",
	"typescript", "openapi-fetch", "@graphql-typed-document-node/core", "graphql-ws", "ws",
}

// TestClientsDocShowsRecipe holds docs/clients.md to what TestTypedClients
// runs, so the page cannot drift from the recipe CI compiles: every file of
// codegen/ shown whole in a fenced block of its language, every command of
// codegenCommands, and each package at e2e/package.json's version. It needs
// no node, so it runs in make test.
func TestClientsDocShowsRecipe(t *testing.T) {
	b, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)

	entries, err := os.ReadDir("codegen")
	if err != nil {
		t.Fatal(err)
	}
	lang := map[string]string{".json": "json", ".yml": "yaml", ".ts": "ts"}
	for _, e := range entries {
		l, ok := lang[filepath.Ext(e.Name())]
		if !ok {
			t.Errorf("codegen/%s: no language for a fenced block of its kind", e.Name())
			continue
		}
		src, err := os.ReadFile(filepath.Join("codegen", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, "```"+l+"\n"+string(src)+"```\n") {
			t.Errorf("docs/clients.md does not show codegen/%s as it is (a ```%s block of the whole file)", e.Name(), l)
		}
	}

	for _, c := range codegenCommands {
		if !strings.Contains(doc, "\n"+c+"\n") {
			t.Errorf("docs/clients.md does not show the command %q", c)
		}
	}

	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	b, err = os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	for _, name := range recipePackages {
		v, ok := pkg.DevDependencies[name]
		if !ok {
			t.Errorf("e2e/package.json does not pin %s", name)
			continue
		}
		if !strings.Contains(doc, " "+name+"@"+v) {
			t.Errorf("docs/clients.md does not install %s@%s, the version e2e/package.json pins", name, v)
		}
	}
}
