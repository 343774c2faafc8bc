//go:build ignore

// Command entc generates the ent client, its GraphQL schema and bindings
// (entgql) and the id-prefix table from the schemas in ./schema.
//
// Two schema hooks shape the generated GraphQL schema for typed clients:
// the edges of every Relay connection and the node of every edge are
// non-null (entgql has no option for it: a connection never holds a null
// edge, and privacy filters rows rather than nulling them), and the
// codegen-only directives @goModel and @goField are taken out, so that the
// schema clients introspect is the API and nothing of the Go bindings. Those
// bindings are in gqlgen.yml instead, which the hook checks.
package main

import (
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
)

// gqlgenConfig is gqlgen's configuration, relative to this directory.
const gqlgenConfig = "../gqlgen.yml"

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("../graph/ent.graphqls"),
		entgql.WithConfigPath(gqlgenConfig),
		entgql.WithWhereInputs(true),
		entgql.WithSchemaHook(nonNullConnections, withoutGoDirectives),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./schema", &gen.Config{
		Features: []gen.Feature{
			gen.FeaturePrivacy,
			gen.FeatureEntQL,
			gen.FeatureExecQuery,
			gen.FeatureIntercept,
			gen.FeatureLock,
			gen.FeatureModifier,
			gen.FeatureUpsert,
			gen.FeatureVersionedMigration,
		},
		Templates: []*gen.Template{
			gen.MustParse(gen.NewTemplate("pulid").ParseFiles("template/pulid.tmpl")),
		},
	}, entc.Extensions(ex))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// nonNullConnections makes edges non-null in every connection
// ([ItemEdge!]!) and node non-null in every edge (Item!).
func nonNullConnections(_ *gen.Graph, s *ast.Schema) error {
	for _, def := range s.Types {
		if def.Kind != ast.Object || !strings.HasSuffix(def.Name, "Connection") || def.Fields.ForName("pageInfo") == nil {
			continue
		}
		edges := def.Fields.ForName("edges")
		if edges == nil || edges.Type.Elem == nil {
			return fmt.Errorf("connection %s has no list of edges", def.Name)
		}
		edge := s.Types[edges.Type.Elem.Name()]
		if edge == nil || edge.Fields.ForName("node") == nil {
			return fmt.Errorf("connection %s: edge type %s has no node", def.Name, edges.Type.Elem.Name())
		}
		edges.Type = ast.NonNullListType(ast.NonNullNamedType(edge.Name, nil), nil)
		node := edge.Fields.ForName("node")
		node.Type = ast.NonNullNamedType(node.Type.Name(), nil)
	}
	return nil
}

// goDirectives are gqlgen's codegen directives that entgql writes into the
// schema; gqlgen.yml carries the same bindings.
var goDirectives = []string{"goModel", "goField"}

// withoutGoDirectives removes the codegen directives and their uses. A
// @goModel is dropped only if gqlgen.yml binds its type to the same Go type,
// and a @goField (entgql writes one for a field whose Go name differs) is
// refused: removing either silently would change the bindings.
func withoutGoDirectives(_ *gen.Graph, s *ast.Schema) error {
	f, err := os.Open(gqlgenConfig)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, err := config.ReadConfig(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", gqlgenConfig, err)
	}
	for _, def := range s.Types {
		for _, d := range def.Directives.ForNames("goModel") {
			model := d.Arguments.ForName("model")
			if model == nil {
				return fmt.Errorf("%s: @goModel without a model", def.Name)
			}
			if !slices.Contains(cfg.Models[def.Name].Model, model.Value.Raw) {
				return fmt.Errorf("%s: entgql binds it with @goModel; add models.%s.model: [%s] to gqlgen.yml", def.Name, def.Name, model.Value.Raw)
			}
		}
		def.Directives = withoutNames(def.Directives)
		for _, field := range def.Fields {
			if field.Directives.ForName("goField") != nil {
				return fmt.Errorf("%s.%s: entgql binds it with @goField; bind it in gqlgen.yml (models.%s.fields) and name the ent field to match", def.Name, field.Name, def.Name)
			}
			field.Directives = withoutNames(field.Directives)
		}
	}
	for _, name := range goDirectives {
		delete(s.Directives, name)
	}
	return nil
}

// withoutNames returns list without the uses of goDirectives.
func withoutNames(list ast.DirectiveList) ast.DirectiveList {
	return slices.DeleteFunc(list, func(d *ast.Directive) bool {
		return slices.Contains(goDirectives, d.Name)
	})
}
