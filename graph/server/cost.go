package server

import (
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/graph"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// The price list of the cost model (docs/limits.md, GraphQL cost). Complexity
// measures the work one operation can cause; points are what it spends of
// the caller's rate limit.
const (
	// scanPrice is the complexity of a where filter, or a totalCount, that
	// the indexes and the item counters cannot answer: it may read every
	// item the caller can see, however small the page.
	scanPrice = 100
	// mutationPrice is the complexity of one mutation field: a transaction
	// and, for items, an event and its webhook deliveries.
	mutationPrice = 10
	// introspectionFieldsPerPoint is how many fields of introspection
	// output cost one point of complexity: they are read from memory, but
	// they are still written into the response.
	introspectionFieldsPerPoint = 100
	// maxIntrospectionFields bounds the introspection output of one
	// operation: a few times GraphiQL's whole schema query.
	maxIntrospectionFields = 20_000
	// maxSelectionWidth bounds the fields (aliases included, fragments
	// spread in place) of any one selection set.
	maxSelectionWidth = 200
	// filterValuesPerPoint is how many list values of a where filter cost
	// one point of complexity; each field given costs one.
	filterValuesPerPoint = 10
	// filterTermsPerCharge is how many terms of a where filter (fields
	// and list values, service.MaxFilterTerms) spend one more point of the
	// rate limit.
	filterTermsPerCharge = 100
)

// counterFilters are the where fields with which totalCount is read from
// the item counters rather than counted.
var counterFilters = map[string]bool{"status": true, "userID": true}

// cheapFilters are the where fields the item counters and the
// (user_id, status) filters answer without reading other rows; any other
// field makes the filter a scan. They also keep totalCount a counter read.
var cheapFilters = map[string]bool{
	"status": true, "statusNEQ": true, "statusIn": true, "statusNotIn": true,
	"userID": true, "role": true, "roleNEQ": true, "roleIn": true, "roleNotIn": true,
}

// cost is the price of one operation, computed before it runs.
type cost struct {
	// Complexity is the work the operation can cause, in points: 1 per
	// field, each element of a page counted, scans and mutations at their
	// price, introspection by the fields it writes.
	Complexity int
	// Points is what the operation spends of the rate limit: 1 per
	// mutation field and 1 per scan, and at least 1.
	Points int
	// RootFields are the names of the operation's top-level fields.
	RootFields []string

	// Over names the bound the operation exceeds, if any: "complexity",
	// "introspection", "width" or "invalid"; pricing stops there.
	Over string
	// Invalid is the VALIDATION_ERROR of an argument out of its bounds (a
	// page size, a filter) when Over is "invalid".
	Invalid *apperr.Error
}

// pricer walks an operation and prices it; it stops as soon as a bound is
// passed, so that pricing a hostile operation costs no more than pricing
// one at the limit.
type pricer struct {
	ast    *ast.Schema
	schema *introspection.Schema
	vars   map[string]any
	limit  int

	cost
	spent       int // complexity of the data fields so far
	introFields int
	scans       int
	filters     int // points of the filters' sizes
}

// price prices op for the schema, with the request's variables, against the
// complexity limit.
func price(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any, limit int) cost {
	p := &pricer{ast: schema, schema: introspection.WrapSchema(schema), vars: vars, limit: limit}
	root := p.flatten(op.SelectionSet)
	for _, f := range root {
		p.RootFields = append(p.RootFields, f.Name)
	}
	for _, f := range root {
		if p.Over != "" {
			break
		}
		if op.Operation == ast.Mutation && !strings.HasPrefix(f.Name, "__") {
			p.Points = sat(p.Points + 1)
			p.add(mutationPrice, 1)
			p.selection(f.SelectionSet, 1)
			continue
		}
		p.field(f, 1)
	}
	p.Complexity = sat(p.spent + (p.introFields+introspectionFieldsPerPoint-1)/introspectionFieldsPerPoint)
	p.Points = sat(max(1, sat(p.Points+p.scans)) + p.filters)
	if p.Over == "" && p.Complexity > limit {
		p.Over = "complexity"
	}
	return p.cost
}

// flatten lists the fields of set with fragments spread in place, and
// refuses a set wider than maxSelectionWidth.
func (p *pricer) flatten(set ast.SelectionSet) []*ast.Field {
	out := appendFields(make([]*ast.Field, 0, len(set)), set)
	if len(out) > maxSelectionWidth {
		p.stop("width")
		return nil
	}
	return out
}

// appendFields appends the fields of set to out, fragments spread in place,
// until there are more than maxSelectionWidth.
func appendFields(out []*ast.Field, set ast.SelectionSet) []*ast.Field {
	for _, sel := range set {
		if len(out) > maxSelectionWidth {
			return out
		}
		switch s := sel.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				out = appendFields(out, s.Definition.SelectionSet)
			}
		case *ast.InlineFragment:
			out = appendFields(out, s.SelectionSet)
		}
	}
	return out
}

// selection prices every field of set, each mult times.
func (p *pricer) selection(set ast.SelectionSet, mult int) {
	for _, f := range p.flatten(set) {
		if p.Over != "" {
			return
		}
		p.field(f, mult)
	}
}

// field prices one field asked for mult times (the product of the page
// sizes above it).
func (p *pricer) field(f *ast.Field, mult int) {
	switch f.Name {
	case "__typename":
		p.add(1, mult)
		return
	case "__schema":
		p.introspect(f.SelectionSet, p.schema)
		return
	case "__type":
		p.introFields++
		if name, ok := f.ArgumentMap(p.vars)["name"].(string); ok {
			if def := p.ast.Types[name]; def != nil {
				p.introspect(f.SelectionSet, introspection.WrapTypeFromDef(p.ast, def))
			}
		}
		return
	}
	p.add(1, mult)
	if f.Definition == nil || f.ObjectDefinition == nil {
		return
	}
	switch {
	case isConnection(p.ast, f.Definition):
		p.connection(f, mult)
	case f.ObjectDefinition.Name == "Query" && f.Name == "nodes":
		ids, _ := f.ArgumentMap(p.vars)["ids"].([]any)
		if len(ids) > service.MaxPageSize {
			p.invalid(apperr.Validation("ids", fmt.Sprintf("must hold at most %d ids", service.MaxPageSize)))
			return
		}
		p.selection(f.SelectionSet, mulCap(mult, max(len(ids), 1), p.limit))
	case f.ObjectDefinition.Name == "Delivery" && f.Name == "attemptLog":
		// A list, not a connection: each delivery carries its latest
		// attempts, up to the service's bound.
		p.selection(f.SelectionSet, mulCap(mult, service.AttemptsShown, p.limit))
	default:
		p.selection(f.SelectionSet, mult)
	}
}

// connection prices a page of a list: what each edge asks for times the
// page size, the filter by its size, and a scan for a filter or a total
// the counters cannot answer. A page size or a filter out of its bounds
// makes the operation invalid.
func (p *pricer) connection(f *ast.Field, mult int) {
	first, last, err := pageArgs(f, p.vars)
	if err != nil {
		p.invalid(err)
		return
	}
	where := graph.Argument(f, "where", p.vars)
	if a := f.Definition.Arguments.ForName("where"); a != nil && where != nil {
		size, err := measureFilter(p.ast, p.ast.Types[a.Type.Name()], where)
		if err != nil {
			p.invalid(err)
			return
		}
		p.add(size.predicates+(size.values+filterValuesPerPoint-1)/filterValuesPerPoint, mult)
		p.filters = sat(p.filters + mulCap(size.terms()/filterTermsPerCharge, mult, p.limit))
	}
	if !onlyFields(where, cheapFilters) {
		p.scan(mult)
	}
	page := max(pageSize(first, last), 1)
	for _, c := range p.flatten(f.SelectionSet) {
		if p.Over != "" {
			return
		}
		switch c.Name {
		case "edges":
			p.add(1, mult)
			p.selection(c.SelectionSet, mulCap(mult, page, p.limit))
		case "totalCount":
			p.add(1, mult)
			if f.Name == "users" || !onlyFields(where, counterFilters) {
				p.scan(mult)
			}
		default:
			p.field(c, mult)
		}
	}
}

// scan adds the price of reading every row the caller can see, mult times.
func (p *pricer) scan(mult int) {
	p.scans = sat(p.scans + mult)
	p.add(scanPrice, mult)
}

// add spends n points of complexity mult times.
func (p *pricer) add(n, mult int) {
	p.spent = sat(p.spent + mulCap(n, mult, p.limit))
	if p.spent > p.limit {
		p.stop("complexity")
	}
}

// invalid stops pricing at an argument out of its bounds.
func (p *pricer) invalid(err *apperr.Error) {
	if p.Over == "" {
		p.Over, p.Invalid = "invalid", err
	}
}

func (p *pricer) stop(bound string) {
	if p.Over == "" {
		p.Over = bound
	}
}

// introspect counts the fields the executor would write for set over v,
// one of the introspection objects, by walking the schema as it would.
func (p *pricer) introspect(set ast.SelectionSet, v any) {
	for _, f := range p.flatten(set) {
		if p.Over != "" {
			return
		}
		p.introFields++
		if p.introFields > maxIntrospectionFields {
			p.stop("introspection")
			return
		}
		for _, child := range introspectionChildren(v, f, p.vars) {
			p.introspect(f.SelectionSet, child)
		}
	}
}

// introspectionChildren are the objects field f of v resolves to: none for
// a scalar, one for an object, every element for a list.
func introspectionChildren(v any, f *ast.Field, vars map[string]any) []any {
	deprecated, _ := f.ArgumentMap(vars)["includeDeprecated"].(bool)
	switch v := v.(type) {
	case *introspection.Schema:
		switch f.Name {
		case "types":
			return each(v.Types())
		case "queryType":
			return one(v.QueryType())
		case "mutationType":
			return one(v.MutationType())
		case "subscriptionType":
			return one(v.SubscriptionType())
		case "directives":
			return each(v.Directives())
		}
	case *introspection.Type:
		switch f.Name {
		case "fields":
			return each(v.Fields(deprecated))
		case "inputFields":
			return each(v.InputFields())
		case "interfaces":
			return each(v.Interfaces())
		case "possibleTypes":
			return each(v.PossibleTypes())
		case "enumValues":
			return each(v.EnumValues(deprecated))
		case "ofType":
			return one(v.OfType())
		}
	case *introspection.Field:
		switch f.Name {
		case "args":
			return each(v.Args)
		case "type":
			return one(v.Type)
		}
	case *introspection.InputValue:
		if f.Name == "type" {
			return one(v.Type)
		}
	case *introspection.Directive:
		if f.Name == "args" {
			return each(v.Args)
		}
	}
	return nil
}

// each returns pointers to the elements of list, as the executor walks them.
func each[T any](list []T) []any {
	out := make([]any, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

func one[T any](v *T) []any {
	if v == nil {
		return nil
	}
	return []any{v}
}

// onlyFields reports whether a where argument is absent or uses only the
// given fields; nested and/or/not filters are never cheap.
func onlyFields(where any, fields map[string]bool) bool {
	m, ok := where.(map[string]any)
	if !ok {
		return where == nil
	}
	for k, v := range m {
		if v != nil && !fields[k] {
			return false
		}
	}
	return true
}

// mulCap multiplies, saturating just above limit: past it the operation is
// refused, and the product of nested page sizes must not overflow.
func mulCap(a, b, limit int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (limit+1)/b+1 {
		return limit + 1
	}
	return min(a*b, limit+1)
}

// sat keeps a sum of non-negative prices from overflowing.
func sat(n int) int {
	if n < 0 {
		return int(^uint(0) >> 1)
	}
	return n
}
