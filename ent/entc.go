//go:build ignore

// Command entc generates the ent client, its GraphQL schema and bindings
// (entgql) and the id-prefix table from the schemas in ./schema; with
// entc_rest.go, the REST shapes and decoders of the types clients write
// through entgql's mutation inputs (entgql.Mutations), whose fields it
// chooses by package ent/schema/api/shape's rules.
//
// Schema hooks shape the generated GraphQL schema for typed clients: the
// edges of every Relay connection and the node of every edge are non-null
// (entgql has no option for it: a connection never holds a null edge, and
// privacy filters rows rather than nulling them); first and last of every
// connection state the page bounds, in REST's words; the values of ent's enums
// are upper case (ACTIVE), as every other enum of the schema is, while the
// database, REST and webhooks keep ent's lower-case values (active): gqlgen.yml
// binds each such enum to graph/enum, which maps one to the other; and the
// codegen-only directives @goModel and @goField are taken out, so that the
// schema clients introspect is the API and nothing of the Go bindings. Those
// bindings are in gqlgen.yml instead, which the hooks check.
//
// The generated ent/runtime sets field defaults and validators by name rather
// than by evaluating the schemas' Fields() (template/runtime.tmpl,
// entc_runtime.go, package schema/named), so that the server does not
// link the field builders.
//
// The server must not link code generators (cmd/server's TestNoCodegenDeps).
// entgql keeps the helpers generated code uses at run time (cursors, page
// info, order direction, transactions) in the package of its generator, so
// after generating, this command copies those files of the entgql module in
// use into third_party/entgql and points the generated code at that copy. The
// schemas import ent/schema/entgql, which is entgql's annotations only under
// the build tag "entc" this command loads them with.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
		// Before WithWhereInputs, which adds its template to these.
		entgql.WithTemplates(templates()...),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("../graph/ent.graphqls"),
		entgql.WithConfigPath(gqlgenConfig),
		entgql.WithWhereInputs(true),
		entgql.WithSchemaHook(nonNullConnections, describePages, upperCaseEnums, withoutGoDirectives),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	// No ent/migrate package and no Client.Schema: they link ent's schema
	// differ (Atlas) into the server, which applies the committed migration
	// files instead (internal/migration). `make migration` and the drift test
	// take the tables from the schemas (entc.LoadGraph).
	sqlStorage, err := gen.NewStorage("sql")
	if err != nil {
		log.Fatalf("ent storage: %v", err)
	}
	storage := *sqlStorage
	storage.SchemaMode &^= gen.Migrate
	err = entc.Generate("./schema", &gen.Config{
		Storage: &storage,
		// First, so that entgql's hooks see the inputs it trims.
		Hooks: []gen.Hook{restShapes},
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
			// Replaces ent's runtime/register (entc_runtime.go).
			gen.MustParse(gen.NewTemplate("named-runtime").Funcs(runtimeFuncs).ParseFiles("template/runtime.tmpl")),
			gen.MustParse(gen.NewTemplate("dialect").ParseFiles("template/dialect.tmpl")),
		},
	}, entc.Extensions(ex), entc.BuildTags("entc"))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
	if err := copyRuntime(); err != nil {
		log.Fatalf("copying entgql's runtime: %v", err)
	}
	if err := useRuntimeCopy("."); err != nil {
		log.Fatalf("pointing generated code at third_party/entgql: %v", err)
	}
}

// templates are entgql's templates with its pagination template replaced
// by template/pagination.tmpl.
func templates() []*gen.Template {
	pagination := gen.MustParse(gen.NewTemplate("template/pagination.tmpl").
		Funcs(entgql.TemplateFuncs).
		ParseFiles("template/pagination.tmpl"))
	var ts []*gen.Template
	for _, t := range entgql.AllTemplates {
		if t == entgql.PaginationTemplate {
			t = pagination
		}
		ts = append(ts, t)
	}
	return ts
}

const (
	entgqlPath  = "entgo.io/contrib/entgql"
	runtimePath = "github.com/acme/itemsvc/third_party/entgql"
	runtimeDir  = "../third_party/entgql"
)

// runtimeFiles are the files of entgql that generated code needs at run
// time; none imports entgql's generator.
var runtimeFiles = []string{"error.go", "pagination.go", "transaction.go"}

// copyRuntime copies runtimeFiles from the entgql in go.mod into runtimeDir.
func copyRuntime() error {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", entgqlPath).Output()
	if err != nil {
		return fmt.Errorf("locate %s: %w", entgqlPath, err)
	}
	src := strings.TrimSpace(string(out))
	for _, name := range runtimeFiles {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(`"entgo.io/ent/entc`)) {
			return fmt.Errorf("%s of %s now imports ent's generator", name, entgqlPath)
		}
		if err := os.WriteFile(filepath.Join(runtimeDir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// useRuntimeCopy rewrites the import of entgql into one of runtimePath in the
// generated Go files under dir (the package name stays entgql).
func useRuntimeCopy(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(data, []byte("// Code generated")) {
			continue
		}
		changed := bytes.ReplaceAll(data, []byte(`"`+entgqlPath+`"`), []byte(`"`+runtimePath+`"`))
		if bytes.Equal(changed, data) {
			continue
		}
		if changed, err = format.Source(changed); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := os.WriteFile(f, changed, 0o644); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no generated file imports %s: have entgql's templates changed?", entgqlPath)
	}
	return nil
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

// Page arguments of every connection, in REST's words for limit: entgql
// describes first and last as "Returns the first _n_ elements from the list."
// The bounds are the service's (DefaultPageSize, MaxPageSize in
// internal/service/listparams.go); graph/server's TestPageArgsDescribed
// holds these words to them.
const (
	firstDescription = "The size of the page counted from its start (after the cursor after, if given): " +
		"a whole number from 0 to 100. Without first and last, the page holds the first 20."
	lastDescription = "The size of the page counted from its end (before the cursor before, if given): " +
		"a whole number from 0 to 100. Not with first."
)

// describePages describes first and last of every connection field (a
// field whose type is a …Connection with edges and pageInfo, and which takes
// first and last), wherever it is: Query.items, Query.users, User.items.
func describePages(_ *gen.Graph, s *ast.Schema) error {
	n := 0
	for _, def := range s.Types {
		for _, f := range def.Fields {
			t := s.Types[f.Type.Name()]
			first, last := f.Arguments.ForName("first"), f.Arguments.ForName("last")
			if t == nil || !strings.HasSuffix(t.Name, "Connection") || t.Fields.ForName("pageInfo") == nil || first == nil || last == nil {
				continue
			}
			first.Description, last.Description = firstDescription, lastDescription
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no connection field takes first and last: has entgql's schema changed?")
	}
	return nil
}

// enumPackage holds the Marshal/Unmarshal functions that gqlgen.yml binds
// ent's enums to, one pair per enum, named after it (MarshalItemStatus).
const enumPackage = "github.com/acme/itemsvc/graph/enum"

// gqlName is what a GraphQL name must be.
var gqlName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// upperCaseEnums writes the values of ent's enums (the enums entgql binds
// with @goModel to an ent type) in upper case, as graph/enum.Name spells
// them, and takes out their @goModel: gqlgen.yml must bind each to the
// functions of enumPackage named after it, which convert between the two
// spellings. A value that would not come back from its upper case (one
// not in lower case) or would not be a GraphQL name is refused: ent's
// value would then have no faithful GraphQL name.
func upperCaseEnums(_ *gen.Graph, s *ast.Schema) error {
	cfg, err := readGqlgenConfig()
	if err != nil {
		return err
	}
	for _, def := range s.Types {
		if def.Kind != ast.Enum || def.Directives.ForName("goModel") == nil {
			continue
		}
		bind := enumPackage + "." + def.Name
		if got := cfg.Models[def.Name].Model; !slices.Equal(got, []string{bind}) {
			return fmt.Errorf("enum %s: gqlgen.yml binds it to %v; bind it to [%s] (MarshalX and UnmarshalX there spell ent's values upper case)", def.Name, got, bind)
		}
		for _, v := range def.EnumValues {
			name := strings.ToUpper(v.Name)
			if strings.ToLower(name) != v.Name || !gqlName.MatchString(name) {
				return fmt.Errorf("enum %s: value %q has no upper-case GraphQL name that gives it back", def.Name, v.Name)
			}
			if v.Description == "" {
				v.Description = fmt.Sprintf("%q on REST, in webhooks and in /v1/events.", v.Name)
			}
			v.Name = name
		}
		def.Directives = withoutNames(def.Directives)
	}
	return nil
}

// readGqlgenConfig reads gqlgen.yml (not its schema).
func readGqlgenConfig() (*config.Config, error) {
	f, err := os.Open(gqlgenConfig)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, err := config.ReadConfig(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", gqlgenConfig, err)
	}
	return cfg, nil
}

// goDirectives are gqlgen's codegen directives that entgql writes into the
// schema; gqlgen.yml carries the same bindings.
var goDirectives = []string{"goModel", "goField"}

// withoutGoDirectives removes the codegen directives and their uses. A
// @goModel is dropped only if gqlgen.yml binds its type to the same Go type,
// and a @goField (entgql writes one for a field whose Go name differs) is
// refused: removing either silently would change the bindings.
func withoutGoDirectives(_ *gen.Graph, s *ast.Schema) error {
	cfg, err := readGqlgenConfig()
	if err != nil {
		return err
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
