// Package schematables reads the tables the ent schemas describe, for the
// tools that compare them with the migrations (`make migration` and the
// drift test). ent generates no migrate package (ent/entc.go explains why),
// so they load the schemas as ent's generator does. Only tools and tests
// import this package: it links ent's generator.
package schematables

import (
	"fmt"

	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

// Load returns the tables of the ent schemas in dir (a path relative to the
// working directory, such as "ent/schema"), loaded with the build tag of
// ent/entc.go.
func Load(dir string) ([]*schema.Table, error) {
	g, err := entc.LoadGraph("./"+dir, &gen.Config{BuildFlags: []string{"-tags", "entc"}})
	if err != nil {
		return nil, fmt.Errorf("load ent schemas: %w", err)
	}
	tables, err := g.Tables()
	if err != nil {
		return nil, fmt.Errorf("ent schema tables: %w", err)
	}
	return tables, nil
}
