// Command gen writes REST's OpenAPI document, rest/openapi/openapi.json (the
// one the server embeds and serves at /v1/openapi.json), from two sources:
//
//   - rest/openapi/skeleton.json, kept by hand: the paths and their prose,
//     the error envelope, the headers and every resource not generated yet;
//   - ent/schema, the one declaration of a resource's shape: for Item, the
//     Item response schema, the ItemCreate and ItemUpdate request bodies,
//     the enums (ItemStatus) and the items list's sort and filter
//     parameters (sort, status, user_id).
//
// The generated components go after the skeleton's in their sections; the
// skeleton must not define them. Run by `go generate ./rest` (rest/generate.go);
// CI fails when the committed document differs from what it writes.
//
// How a field shows (ent's declaration, then ent/schema/api's annotations):
// every field is in the response schema unless api.Hidden; a client may set
// it unless it is Immutable or kept by the server (UpdateDefault), and must
// on create when it is neither Optional nor has a Default; an update takes
// the Immutable ones back when unchanged and the kept ones as ignored (as
// rest/decode.go's readOnly does); a field GraphQL orders by
// (entgql.OrderField) is a sort field unless api.NoSort, the first in ent's
// order the default; api.Filter makes a list parameter of it. Comments
// (field.X(...).Comment) are the descriptions.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"entgo.io/ent/schema/field"

	"github.com/acme/itemsvc/ent/schema/api"
)

// generated names the types whose components are generated, with their
// list operation in the skeleton.
var generated = []resource{{Type: "Item", ListOperation: "listItems"}}

type resource struct {
	Type          string
	ListOperation string
}

func main() {
	schemaDir := flag.String("schema", "../ent/schema", "ent schema directory")
	skeleton := flag.String("skeleton", "openapi/skeleton.json", "hand-kept part of the document")
	out := flag.String("out", "openapi/openapi.json", "document to write")
	flag.Parse()
	g, err := loadGraph(*schemaDir)
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(*skeleton)
	if err != nil {
		log.Fatal(err)
	}
	doc, err := build(data, g.Nodes)
	if err != nil {
		log.Fatalf("%s: %v", *skeleton, err)
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		log.Fatal(err)
	}
}

// loadGraph loads the schemas as ent/entc.go does, entgql's annotations
// included (build tag entc).
func loadGraph(dir string) (*gen.Graph, error) {
	g, err := entc.LoadGraph(dir, &gen.Config{BuildFlags: []string{"-tags", "entc"}})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	return g, nil
}

// build merges the components generated from types into the skeleton.
func build(skeleton []byte, types []*gen.Type) ([]byte, error) {
	v, err := parse(skeleton)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(*object)
	if !ok || doc.obj("components") == nil {
		return nil, fmt.Errorf("no components")
	}
	comps := doc.obj("components")
	for _, r := range generated {
		t := findType(types, r.Type)
		if t == nil {
			return nil, fmt.Errorf("ent has no type %s", r.Type)
		}
		c, err := components(t, types)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Type, err)
		}
		for _, sec := range []struct {
			name string
			objs *object
		}{{"schemas", c.schemas}, {"parameters", c.parameters}} {
			dst := comps.obj(sec.name)
			if dst == nil {
				return nil, fmt.Errorf("no components.%s", sec.name)
			}
			for _, k := range sec.objs.keys {
				if _, dup := dst.get(k); dup {
					return nil, fmt.Errorf("components.%s.%s is generated from ent/schema: take it out of the skeleton", sec.name, k)
				}
				dst.set(k, sec.objs.vals[k])
			}
		}
		if err := listParameters(doc, r.ListOperation, c.parameters.keys); err != nil {
			return nil, err
		}
	}
	return encode(doc)
}

// listParameters makes the list operation take every generated parameter:
// the skeleton places those it names, the others go last.
func listParameters(doc *object, operationID string, names []string) error {
	op := findOperation(doc, operationID)
	if op == nil {
		return fmt.Errorf("no operation %s", operationID)
	}
	params, _ := op.vals["parameters"].([]any)
	for _, name := range names {
		ref := "#/components/parameters/" + name
		if !slices.ContainsFunc(params, func(p any) bool {
			o, ok := p.(*object)
			if !ok {
				return false
			}
			r, _ := o.get("$ref")
			return r == ref
		}) {
			params = append(params, newObject().set("$ref", ref))
		}
	}
	op.set("parameters", params)
	return nil
}

func findOperation(doc *object, id string) *object {
	paths := doc.obj("paths")
	if paths == nil {
		return nil
	}
	for _, p := range paths.keys {
		item := paths.obj(p)
		if item == nil {
			continue
		}
		for _, m := range item.keys {
			if op := item.obj(m); op != nil {
				if v, _ := op.get("operationId"); v == id {
					return op
				}
			}
		}
	}
	return nil
}

func findType(types []*gen.Type, name string) *gen.Type {
	for _, t := range types {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// generatedComponents are one type's components, in their order.
type generatedComponents struct {
	schemas, parameters *object
}

// components generates a type's schemas and list parameters.
func components(t *gen.Type, types []*gen.Type) (generatedComponents, error) {
	c := generatedComponents{schemas: newObject(), parameters: newObject()}
	fields, err := restFields(t)
	if err != nil {
		return c, err
	}
	// Enums first, named as GraphQL names them (entgql.Type) or ent does.
	for _, f := range fields {
		if f.ent.IsEnum() {
			vals := []any{}
			for _, e := range f.ent.Enums {
				vals = append(vals, e.Value)
			}
			c.schemas.set(enumName(t, f.ent), newObject().set("type", "string").set("enum", vals))
		}
	}

	item := newObject()
	required := []any{}
	for _, f := range fields {
		// resource.Item carries every key, null when Nillable and unset.
		item.set(f.name, f.schema(t, types, true))
		required = append(required, f.name)
	}
	c.schemas.set(t.Name, newObject().
		set("type", "object").
		set("properties", item).
		set("required", required).
		set("additionalProperties", false))

	create, createRequired := newObject(), []any{}
	update := newObject()
	var settable, fixed, kept []string
	for _, f := range fields {
		if f.settable() {
			settable = append(settable, f.name)
			create.set(f.name, f.schema(t, types, false))
			update.set(f.name, f.schema(t, types, false))
			if !f.ent.Optional && !f.ent.Default {
				createRequired = append(createRequired, f.name)
			}
		}
	}
	for _, f := range fields {
		switch {
		case f.settable():
		case f.ent.UpdateDefault:
			kept = append(kept, f.name)
			update.set(f.name, newObject().set("type", f.jsonType()).set("description",
				"Kept by the server, which moves it on its own: any value is accepted and ignored."))
		default:
			fixed = append(fixed, f.name)
			update.set(f.name, newObject().set("type", f.jsonType()).set("description",
				"Read-only: accepted when it equals the resource's current value (a client may send back what it got), otherwise 400 VALIDATION_ERROR naming it."))
		}
	}
	createSchema := newObject().set("type", "object").set("properties", create)
	if len(createRequired) > 0 {
		createSchema.set("required", createRequired)
	}
	c.schemas.set(t.Name+"Create", createSchema.set("additionalProperties", false))
	c.schemas.set(t.Name+"Update", newObject().
		set("type", "object").
		set("description", updateDescription(strings.ToLower(t.Name), settable, fixed, kept)).
		set("properties", update).
		set("additionalProperties", false))

	// Sort fields in ent's order (a mixin's first): the first is the default.
	var sorts []any
	for _, ef := range t.Fields {
		for _, f := range fields {
			if f.ent == ef && f.sortable() {
				sorts = append(sorts, f.name)
			}
		}
	}
	for _, f := range fields {
		if f.api.Filter == "" {
			continue
		}
		var s *object
		if f.ent.IsEnum() {
			s = newObject().set("$ref", "#/components/schemas/"+enumName(t, f.ent))
		} else {
			s = newObject().set("type", f.jsonType())
		}
		c.parameters.set(f.name, newObject().
			set("name", f.name).set("in", "query").
			set("description", f.api.Filter).
			set("schema", s))
	}
	if len(sorts) > 0 {
		c.parameters.set("sort", newObject().
			set("name", "sort").set("in", "query").
			set("description", "Field to sort by.").
			set("schema", newObject().set("type", "string").set("enum", sorts).set("default", sorts[0])))
	}
	return c, nil
}

// updateDescription says what an update takes, as rest/decode.go reads it.
func updateDescription(noun string, settable, fixed, kept []string) string {
	s := "Any of " + strings.Join(settable, ", ") + "."
	if len(fixed) > 0 {
		s += fmt.Sprintf(" The read-only fields %s are accepted when they equal the %s's (a client may PUT back what it got) and refused naming them otherwise",
			and(fixed), noun)
	}
	if len(kept) > 0 {
		verb := "is"
		if len(kept) > 1 {
			verb = "are"
		}
		s += fmt.Sprintf("; %s %s accepted and ignored", and(kept), verb)
	}
	return s + "."
}

func and(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// restField is a field as REST shows it.
type restField struct {
	name string
	ent  *gen.Field
	api  api.Annotation
	gql  gqlAnnotation
	id   bool
}

// gqlAnnotation is what the generator reads of entgql's annotation.
type gqlAnnotation struct {
	OrderField string `json:"OrderField,omitempty"`
	Type       string `json:"Type,omitempty"`
}

// restFields are the fields REST shows, in the order resource.Item has
// them: the id, the type's own fields, then those of its mixins.
func restFields(t *gen.Type) ([]restField, error) {
	var own, mixed []restField
	for _, f := range t.Fields {
		rf := restField{name: f.Name, ent: f}
		if err := annotation(f.Annotations, api.Annotation{}.Name(), &rf.api); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := annotation(f.Annotations, "EntGQL", &rf.gql); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if rf.api.Hidden {
			continue
		}
		if _, err := baseType(f); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if f.Position != nil && f.Position.MixedIn {
			mixed = append(mixed, rf)
		} else {
			own = append(own, rf)
		}
	}
	id := restField{name: "id", ent: t.ID, id: true}
	return append(append([]restField{id}, own...), mixed...), nil
}

// annotation decodes the annotation of that name (a value after
// entc.LoadGraph, or a map read back from JSON) into v.
func annotation(as gen.Annotations, name string, v any) error {
	a, ok := as[name]
	if !ok {
		return nil
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// settable says whether a client may set the field.
func (f restField) settable() bool {
	return !f.id && !f.ent.Immutable && !f.ent.UpdateDefault
}

func (f restField) sortable() bool {
	return f.gql.OrderField != "" && !f.api.NoSort
}

// jsonType is the JSON type of the field's values.
func (f restField) jsonType() string {
	t, _ := baseType(f.ent)
	return t
}

func baseType(f *gen.Field) (string, error) {
	switch {
	case f.IsString(), f.IsEnum(), f.IsTime():
		return "string", nil
	case f.IsBool():
		return "boolean", nil
	case f.Type.Type == field.TypeFloat32 || f.Type.Type == field.TypeFloat64:
		return "number", nil
	case f.Type.Numeric():
		return "integer", nil
	}
	return "", fmt.Errorf("ent type %s has no REST shape in rest/openapi/gen: teach baseType, or api.Hidden() it", f.Type)
}

// schema is the field's schema in a response (response) or a request body.
func (f restField) schema(t *gen.Type, types []*gen.Type, response bool) *object {
	s := newObject()
	switch {
	case f.ent.IsEnum():
		s.set("$ref", "#/components/schemas/"+enumName(t, f.ent))
	case f.ent.IsTime():
		s.set("$ref", "#/components/schemas/Timestamp")
	default:
		s.set("type", f.jsonType())
		if response {
			if p := f.prefix(t); p != "" {
				s.set("pattern", "^"+p)
			}
		}
	}
	if c := f.ent.Comment(); c != "" {
		s.set("description", c)
	}
	if response || !f.api.Trimmed {
		if n := f.api.MinLength; n != nil && *n > 0 {
			s.set("minLength", *n)
		}
		if n := f.api.MaxLength; n != nil {
			s.set("maxLength", *n)
		}
	}
	if f.ent.Nillable {
		if ref, ok := s.get("$ref"); ok {
			n := newObject().set("anyOf", []any{newObject().set("$ref", ref), newObject().set("type", "null")})
			if d, ok := s.get("description"); ok {
				n.set("description", d)
			}
			s = n
		} else {
			s.set("type", []any{f.jsonType(), "null"})
		}
	}
	return s
}

// prefix is the id prefix of the field's values: the type's own for its id,
// the edge's target's for an edge field.
func (f restField) prefix(t *gen.Type) string {
	target := t
	if !f.id {
		target = nil
		for _, e := range t.Edges {
			if ef := e.Field(); ef != nil && ef.Name == f.name {
				target = e.Type
			}
		}
	}
	if target == nil {
		return ""
	}
	var p struct{ Prefix string }
	_ = annotation(target.Annotations, "PULID", &p)
	return p.Prefix
}

// enumName is the enum's component name: GraphQL's (entgql.Type), else
// the type's name and the field's.
func enumName(t *gen.Type, f *gen.Field) string {
	var a gqlAnnotation
	_ = annotation(f.Annotations, "EntGQL", &a)
	if a.Type != "" {
		return a.Type
	}
	return t.Name + f.StructField()
}
