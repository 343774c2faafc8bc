//go:build ignore

// Command entc generates the ent client, its GraphQL schema and bindings
// (entgql) and the id-prefix table from the schemas in ./schema.
package main

import (
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("../graph/ent.graphqls"),
		entgql.WithConfigPath("../gqlgen.yml"),
		entgql.WithWhereInputs(true),
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
