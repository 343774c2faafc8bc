package docs_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/acme/itemsvc/graph/generated"
	"github.com/acme/itemsvc/graph/server"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/rest"
)

// parityPage is the page whose "## Pairs" table pairs every REST operation
// with its GraphQL twin; the tests below hold it to both APIs.
const parityPage = "parity.md"

// none is how a row says that one API has no twin.
const none = "—"

// pair is one row of the table: a REST operation ("GET /v1/items/{id}")
// and a GraphQL field ("Query.item"), either none, and the note.
type pair struct {
	rest, graph, note string
	line              int
}

// readPairs reads the rows of the table under "## Pairs" of text.
func readPairs(t *testing.T, text string) []pair {
	t.Helper()
	var pairs []pair
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line) == "## Pairs"
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 3 {
				t.Errorf("%s:%d: a row has three cells (REST, GraphQL, note): %s", parityPage, n, line)
				continue
			}
			p := pair{rest: cell(cells[0]), graph: cell(cells[1]), note: strings.TrimSpace(cells[2]), line: n}
			if p.rest == "REST" || strings.Trim(p.rest, "-") == "" {
				continue // the header and its rule
			}
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		t.Fatalf("%s has no rows under ## Pairs", parityPage)
	}
	return pairs
}

// cell is a cell's operation without its backticks.
func cell(s string) string {
	return strings.Trim(strings.TrimSpace(s), "`")
}

// apiMethods are the keys of an OpenAPI path item that are operations.
var apiMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// restOperations are the REST operations: those of the OpenAPI document
// (doc), under its server's URL, and the routes engine serves outside the
// GraphQL API's own paths (/graphql, /playground), written as the document
// writes a path (/v1/items/{id}).
func restOperations(t *testing.T, doc []byte, engine *gin.Engine) map[string]bool {
	t.Helper()
	var d struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Servers) != 1 {
		t.Fatalf("the OpenAPI document has %d servers, want the one of /v1", len(d.Servers))
	}
	ops := map[string]bool{}
	for path, item := range d.Paths {
		for method := range item {
			if slices.Contains(apiMethods, method) {
				ops[strings.ToUpper(method)+" "+d.Servers[0].URL+path] = true
			}
		}
	}
	param := regexp.MustCompile(`[:*]([A-Za-z_]+)`)
	for _, r := range engine.Routes() {
		if r.Path == server.Endpoint || r.Path == server.PlaygroundPath {
			continue
		}
		ops[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	return ops
}

// rootFields are the fields of Query, Mutation and Subscription, but
// GraphQL's own (__schema, __type), as "Query.items".
func rootFields(schema *ast.Schema) []string {
	var out []string
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription} {
		for _, f := range root.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				out = append(out, root.Name+"."+f.Name)
			}
		}
	}
	return out
}

// unpaired lists what is wrong with the table for these operations and
// this schema: an operation of either API that no row pairs, a row naming
// an operation or field that does not exist, a one-sided row without its
// reason, a row twice.
func unpaired(pairs []pair, ops map[string]bool, schema *ast.Schema) []string {
	var problems []string
	restPaired, graphPaired, seen := map[string]bool{}, map[string]bool{}, map[[2]string]bool{}
	for _, p := range pairs {
		at := fmt.Sprintf("%s:%d", parityPage, p.line)
		switch {
		case p.rest == none && p.graph == none:
			problems = append(problems, at+": a row pairs nothing")
		case (p.rest == none || p.graph == none) && p.note == "":
			problems = append(problems, at+": a one-sided row says why in its note")
		}
		if seen[[2]string{p.rest, p.graph}] {
			problems = append(problems, fmt.Sprintf("%s: %s and %s are paired twice", at, p.rest, p.graph))
		}
		seen[[2]string{p.rest, p.graph}] = true
		if p.rest != none {
			restPaired[p.rest] = true
			if !ops[p.rest] {
				problems = append(problems, fmt.Sprintf("%s: %s is neither in rest/openapi/openapi.json nor served", at, p.rest))
			}
		}
		if p.graph != none {
			graphPaired[p.graph] = true
			typ, field, _ := strings.Cut(p.graph, ".")
			if def := schema.Types[typ]; def == nil || def.Fields.ForName(field) == nil {
				problems = append(problems, fmt.Sprintf("%s: %s is not a field of the GraphQL schema", at, p.graph))
			}
		}
	}
	var missing []string
	for op := range ops {
		if !restPaired[op] {
			missing = append(missing, fmt.Sprintf("%s has no row: add | `%s` | `its GraphQL twin` | | to docs/%s (or `—` and why)", op, op, parityPage))
		}
	}
	for _, f := range rootFields(schema) {
		if !graphPaired[f] {
			missing = append(missing, fmt.Sprintf("%s has no row: add | `its REST twin` | `%s` | | to docs/%s (or `—` and why)", f, f, parityPage))
		}
	}
	slices.Sort(missing)
	return append(problems, missing...)
}

// parityInputs are what the table is held to: the OpenAPI document, the
// router, the GraphQL schema and the table itself.
type parityInputs struct {
	doc    []byte
	engine *gin.Engine
	schema *ast.Schema
	pairs  []pair
}

func newParityInputs(t *testing.T) parityInputs {
	t.Helper()
	env := testutil.New(t)
	engine, ok := env.App.Handler.(*gin.Engine)
	if !ok {
		t.Fatalf("the app's handler is a %T, not the gin engine whose routes this test reads", env.App.Handler)
	}
	page, err := os.ReadFile(parityPage)
	if err != nil {
		t.Fatal(err)
	}
	return parityInputs{
		doc:    rest.OpenAPI(),
		engine: engine,
		schema: generated.NewExecutableSchema(generated.Config{}).Schema(),
		pairs:  readPairs(t, string(page)),
	}
}

func (in parityInputs) unpaired(t *testing.T) []string {
	return unpaired(in.pairs, restOperations(t, in.doc, in.engine), in.schema)
}

// TestParityTable: docs/parity.md pairs every REST operation with its
// GraphQL twin and every root field of the GraphQL schema with its REST
// one, and names nothing that does not exist.
func TestParityTable(t *testing.T) {
	in := newParityInputs(t)
	for _, p := range in.unpaired(t) {
		t.Error(p)
	}
	if n := len(rootFields(in.schema)); n < 10 {
		t.Fatalf("%d root fields: is the schema loaded?", n)
	}
}

// TestParityTableFindsTheUnpaired: the table's test fails on an operation
// added to either API without its row (a route, a method on a route, an
// operation of the OpenAPI document, a query, a mutation, a subscription),
// and on rows that name nothing real. Each case changes one input and
// looks for the problem it must cause.
func TestParityTableFindsTheUnpaired(t *testing.T) {
	in := newParityInputs(t)
	noop := func(*gin.Context) {}
	cases := []struct {
		name   string
		change func(t *testing.T, in *parityInputs)
		want   string
	}{
		{"a REST route", func(_ *testing.T, in *parityInputs) { in.engine.GET("/v1/ghosts", noop) },
			"GET /v1/ghosts has no row"},
		{"a method on a REST route", func(_ *testing.T, in *parityInputs) { in.engine.PATCH("/v1/items/:id", noop) },
			"PATCH /v1/items/{id} has no row"},
		{"a route outside /v1", func(_ *testing.T, in *parityInputs) { in.engine.GET("/status", noop) },
			"GET /status has no row"},
		{"an operation of the OpenAPI document", func(t *testing.T, in *parityInputs) {
			var doc map[string]any
			if err := json.Unmarshal(in.doc, &doc); err != nil {
				t.Fatal(err)
			}
			doc["paths"].(map[string]any)["/ghosts/{id}"] = map[string]any{"delete": map[string]any{}}
			in.doc, _ = json.Marshal(doc)
		}, "DELETE /v1/ghosts/{id} has no row"},
		{"a query", func(t *testing.T, in *parityInputs) {
			in.schema = extended(t, in.schema, `extend type Query { "x" ghost: Int }`)
		}, "Query.ghost has no row"},
		{"a mutation", func(t *testing.T, in *parityInputs) {
			in.schema = extended(t, in.schema, `extend type Mutation { "x" haunt: Int }`)
		}, "Mutation.haunt has no row"},
		{"a subscription", func(t *testing.T, in *parityInputs) {
			in.schema = extended(t, in.schema, `extend type Subscription { "x" ghosts: Int }`)
		}, "Subscription.ghosts has no row"},
		{"a row naming a route that does not exist", func(_ *testing.T, in *parityInputs) {
			in.pairs = append(in.pairs, pair{rest: "GET /v1/nothing", graph: "Query.me", line: 999})
		}, "GET /v1/nothing is neither in rest/openapi/openapi.json nor served"},
		{"a row naming a field that does not exist", func(_ *testing.T, in *parityInputs) {
			in.pairs = append(in.pairs, pair{rest: "GET /v1/users/me", graph: "Query.nothing", line: 999})
		}, "Query.nothing is not a field of the GraphQL schema"},
		{"a one-sided row without its reason", func(_ *testing.T, in *parityInputs) {
			in.pairs = append(in.pairs, pair{rest: "GET /v1/users/me", graph: none, line: 999})
		}, "a one-sided row says why"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changed := in
			changed.pairs = slices.Clone(in.pairs)
			c.change(t, &changed)
			problems := changed.unpaired(t)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem says %q; found %q", c.want, problems)
			}
		})
	}
}

// extended is schema with more SDL added, loaded again from its text.
func extended(t *testing.T, schema *ast.Schema, sdl string) *ast.Schema {
	t.Helper()
	var b strings.Builder
	formatter.NewFormatter(&b).FormatSchema(schema)
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "schema", Input: b.String()}, &ast.Source{Name: "extension", Input: sdl})
	if err != nil {
		t.Fatalf("extend the schema: %v", err)
	}
	return s
}
