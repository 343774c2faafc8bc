//go:build ignore

// Command snapshot writes testdata/schema.graphql, the public GraphQL
// schema as the server executes it (SDL), run by go generate after gqlgen:
// a change of the schema (an ent field, entgql's output, a hand-written
// type) is then a change of a committed file, seen and reviewed as the API
// change it is. TestSchemaSnapshot checks that the file is current and that
// introspection shows that schema.
package main

import (
	"log"
	"os"
	"strings"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/acme/itemsvc/graph/generated"
)

func main() {
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchema(generated.NewExecutableSchema(generated.Config{}).Schema())
	if err := os.WriteFile("testdata/schema.graphql", []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}
