// Command gen writes REST's OpenAPI document, rest/openapi/openapi.json (the
// one the server embeds and serves at /v1/openapi.json), from two sources:
//
//   - rest/openapi/skeleton.json, kept by hand: the paths and their prose,
//     the envelope, pagination, errors and headers, and the shapes that are
//     no ent type (login, token, backup, recovery, a delete's answer);
//   - ent/schema, the one declaration of each resource: every type
//     annotated api.Resource (Item, User, APIKey, Webhook, Delivery,
//     DeliveryAttempt, Event, AuditEvent) gives its response schema, its
//     Create and Update request bodies (none when api.ReadOnly), the
//     WithSecret variant when a field is api.Once, its enums, and the
//     filter and sort parameters of its list (api.List: the operation in
//     the skeleton and the prefix of the parameters' component names).
//
// The generated components go after the skeleton's in their sections; the
// skeleton may name one only to give it prose (description, examples), which
// replaces the generator's. Run by `go generate ./rest` (rest/generate.go);
// CI fails when the committed document differs from what it writes, and
// main_test.go when the skeleton writes a resource's properties or a list
// parameter by hand.
//
// How a field shows (ent's declaration, then ent/schema/api's annotations,
// see that package for each; the rules of which fields show and who sets
// them are package ent/schema/api/shape's, which ent/entc_rest.go reads too
// for the Go shapes, REST's decoders and GraphQL's inputs): every field is in the response schema unless
// Sensitive (api.Once: in the WithSecret variant only) or api.Hidden, under
// api.Rename's name if any; a client may set it unless it is Immutable
// (api.CreateOnly: on create only) or kept by the server (UpdateDefault,
// api.Kept), api.NoCreate keeping it out of the create body, and must on
// create when it is neither Optional nor has a Default nor is api.Optional;
// an update may send null for an Optional field of a type clients write
// through entgql's inputs (shape.Field.Clearable), which clears it;
// an update takes the fields it cannot set back when unchanged and the kept
// ones as ignored (as rest/decode.go's readOnly does); a field GraphQL
// orders by (entgql.OrderField) is a sort field unless api.NoSort (on the
// type: no sort parameter), the first in ent's order the default; api.Filter
// makes a list parameter of it. An edge shows only when annotated: the
// target's field api.Of, else the target resource or an array of them.
// api.Describe, else the Comment, is the description (api.Request in the
// request bodies); api.Length, Range, Min, Format, Pattern, Unique, Enum,
// Ref, Schema and Nullable add what ent's type does not say.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"entgo.io/ent/schema/field"

	"github.com/acme/itemsvc/ent/schema/api/shape"
)

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

// prose are the members the skeleton may give a generated schema: its
// description and examples, written for readers, which replace the
// generator's.
var prose = []string{"description", "examples"}

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
	c, err := generate(types)
	if err != nil {
		return nil, err
	}
	comps := doc.obj("components")
	for _, sec := range []struct {
		name string
		objs *object
	}{{"schemas", c.schemas}, {"parameters", c.parameters}} {
		dst := comps.obj(sec.name)
		if dst == nil {
			return nil, fmt.Errorf("no components.%s", sec.name)
		}
		for _, k := range sec.objs.keys {
			g := sec.objs.obj(k)
			if hand := dst.obj(k); hand != nil {
				for _, m := range hand.keys {
					if sec.name != "schemas" || !slices.Contains(prose, m) {
						return nil, fmt.Errorf("components.%s.%s is generated from ent/schema: the skeleton may give it only %s, not %s", sec.name, k, strings.Join(prose, " and "), m)
					}
					g.set(m, hand.vals[m])
				}
			}
			dst.set(k, g)
		}
	}
	for _, l := range c.lists {
		if err := listParameters(doc, l.operation, l.parameters); err != nil {
			return nil, err
		}
	}
	return encode(doc)
}

// generated are the components made from every resource, in ent's order of
// the types, and the parameters each list takes.
type generated struct {
	schemas, parameters *object
	lists               []list
}

// list is one list operation and the components of its parameters.
type list struct {
	operation  string
	parameters []string
}

// generate makes the components of every type annotated api.Resource. An
// enum several resources use is made once; its declarations must agree.
func generate(types []*gen.Type) (generated, error) {
	all := generated{schemas: newObject(), parameters: newObject()}
	for _, t := range types {
		r, err := shape.Type(t)
		if err != nil {
			return all, err
		}
		if r.Resource == "" {
			continue
		}
		c, err := components(t, types)
		if err != nil {
			return all, fmt.Errorf("%s: %w", t.Name, err)
		}
		for _, k := range c.schemas.keys {
			if prev, dup := all.schemas.get(k); dup {
				a, _ := encode(prev)
				b, _ := encode(c.schemas.vals[k])
				if !bytes.Equal(a, b) {
					return all, fmt.Errorf("%s: components.schemas.%s is declared twice, differently", t.Name, k)
				}
				continue
			}
			all.schemas.set(k, c.schemas.vals[k])
		}
		for _, k := range c.parameters.keys {
			if _, dup := all.parameters.get(k); dup {
				return all, fmt.Errorf("%s: components.parameters.%s is declared twice: give the resource its own api.List prefix", t.Name, k)
			}
			all.parameters.set(k, c.parameters.vals[k])
		}
		if r.List != "" {
			all.lists = append(all.lists, list{operation: r.List, parameters: c.parameters.keys})
		} else if len(c.parameters.keys) > 0 {
			return all, fmt.Errorf("%s has list parameters but no api.List operation", t.Name)
		}
	}
	return all, nil
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

// typeComponents are one type's components, in their order.
type typeComponents struct {
	schemas, parameters *object
}

// components generates a type's schemas and list parameters.
func components(t *gen.Type, types []*gen.Type) (typeComponents, error) {
	c := typeComponents{schemas: newObject(), parameters: newObject()}
	r, err := shape.Type(t)
	if err != nil {
		return c, err
	}
	fields, err := restFields(t)
	if err != nil {
		return c, err
	}
	// Enums first, named as GraphQL names them (entgql.Type), as
	// api.Enum says, or as ent does.
	for _, f := range fields {
		if name, vals := f.enum(t); name != "" {
			c.schemas.set(name, newObject().set("type", "string").set("enum", vals))
		}
	}

	objectOf := func(props *object, required []any) *object {
		o := newObject().set("type", "object").set("properties", props)
		if len(required) > 0 {
			o.set("required", required)
		}
		return o.set("additionalProperties", false)
	}
	// internal/resource carries every key, null when Nillable and unset;
	// the secret shown once only in the variant with it.
	shown, shownRequired := newObject(), []any{}
	secret, secretRequired := newObject(), []any{}
	for _, f := range fields {
		s, err := f.schema(t, types, true, f.Nillable())
		if err != nil {
			return c, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if !f.API.Once {
			shown.set(f.Name, s)
			shownRequired = append(shownRequired, f.Name)
		}
		secret.set(f.Name, s)
		secretRequired = append(secretRequired, f.Name)
	}
	c.schemas.set(r.Resource, objectOf(shown, shownRequired))
	if len(secret.keys) > len(shown.keys) {
		c.schemas.set(r.Resource+"WithSecret", objectOf(secret, secretRequired))
	}

	if !r.ReadOnly {
		if err := requestBodies(c.schemas, t, types, r.Resource, fields); err != nil {
			return c, err
		}
	}

	for _, f := range fields {
		if f.API.Filter == "" {
			continue
		}
		var s *object
		switch name, _ := f.enum(t); {
		case f.API.FilterList:
			s = newObject().set("type", "string").set("minLength", 1)
		case name != "":
			s = newObject().set("$ref", "#/components/schemas/"+name)
		default:
			s = newObject().set("type", f.jsonType())
			if f.API.Pattern != "" {
				s.set("pattern", f.API.Pattern)
			}
		}
		param := f.Name
		if f.API.Param != "" {
			param = f.API.Param
		}
		c.parameters.set(r.Params+param, newObject().
			set("name", param).set("in", "query").
			set("description", f.API.Filter).
			set("schema", s))
	}
	// Sort fields in ent's order (a mixin's first): the first is the
	// default. A resource without a list has none.
	var sorts []any
	if !r.NoSort && r.List != "" {
		for _, ef := range t.Fields {
			for _, f := range fields {
				if f.Ent == ef && f.sortable() {
					sorts = append(sorts, f.Name)
				}
			}
		}
	}
	if len(sorts) > 0 {
		c.parameters.set(r.Params+"sort", newObject().
			set("name", "sort").set("in", "query").
			set("description", "Field to sort by.").
			set("schema", newObject().set("type", "string").set("enum", sorts).set("default", sorts[0])))
	}
	return c, nil
}

// requestBodies adds the create and update bodies of a resource named name.
func requestBodies(schemas *object, t *gen.Type, types []*gen.Type, name string, fields []restField) error {
	create, createRequired := newObject(), []any{}
	update := newObject()
	var settable, fixed, kept []string
	for _, f := range fields {
		if f.Creatable() {
			s, err := f.schema(t, types, false, false)
			if err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			create.set(f.Name, s)
			if !f.Ent.Optional && !f.Ent.Default && !f.API.Optional {
				createRequired = append(createRequired, f.Name)
			}
		}
		if f.Updatable() {
			s, err := f.schema(t, types, false, f.Nillable() || f.Clearable)
			if err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			settable = append(settable, f.Name)
			update.set(f.Name, s)
		}
	}
	for _, f := range fields {
		switch {
		case f.Edge != nil, f.API.Once, f.Updatable():
		case f.Kept():
			kept = append(kept, f.Name)
			update.set(f.Name, f.plain().set("description",
				"Kept by the server, which moves it on its own: any value is accepted and ignored."))
		default:
			fixed = append(fixed, f.Name)
			update.set(f.Name, f.plain().set("description",
				"Read-only: accepted when it equals the resource's current value (a client may send back what it got), otherwise 400 VALIDATION_ERROR naming it."))
		}
	}
	createSchema := newObject().set("type", "object").set("properties", create)
	if len(createRequired) > 0 {
		createSchema.set("required", createRequired)
	}
	schemas.set(name+"Create", createSchema.set("additionalProperties", false))
	schemas.set(name+"Update", newObject().
		set("type", "object").
		set("description", updateDescription(strings.ToLower(name), settable, fixed, kept)).
		set("properties", update).
		set("additionalProperties", false))
	return nil
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

// restField is a field, or an annotated edge, as REST shows it (package
// shape) with what entgql says of it.
type restField struct {
	shape.Field
	gql gqlAnnotation
}

// gqlAnnotation is what the generator reads of entgql's annotation.
type gqlAnnotation struct {
	OrderField string `json:"OrderField,omitempty"`
	Type       string `json:"Type,omitempty"`
}

// restFields are the fields REST shows (shape.Fields), each with its
// entgql annotation; a field of a type baseType cannot show needs a schema
// of its own (api.Schema, api.Ref).
func restFields(t *gen.Type) ([]restField, error) {
	fields, err := shape.Fields(t)
	if err != nil {
		return nil, err
	}
	out := make([]restField, len(fields))
	for i, sf := range fields {
		rf := restField{Field: sf}
		if sf.Ent != nil && !sf.ID {
			if err := shape.Decode(sf.Ent.Annotations, "EntGQL", &rf.gql); err != nil {
				return nil, fmt.Errorf("field %s: %w", sf.Ent.Name, err)
			}
			if sf.API.Schema == "" && sf.API.Ref == "" {
				if _, err := baseType(sf.Ent); err != nil {
					return nil, fmt.Errorf("field %s: %w", sf.Ent.Name, err)
				}
			}
		}
		out[i] = rf
	}
	return out, nil
}

func (f restField) sortable() bool {
	return f.Ent != nil && f.gql.OrderField != "" && !f.API.NoSort
}

// enum is the name and values of the enum component the field's values
// are, if any.
func (f restField) enum(t *gen.Type) (string, []any) {
	var vals []any
	switch {
	case f.Ent == nil:
		return "", nil
	case f.Ent.IsEnum():
		for _, e := range f.Ent.Enums {
			vals = append(vals, e.Value)
		}
		return enumName(t, f.Ent), vals
	case f.API.Enum != "":
		for _, v := range f.API.Values {
			vals = append(vals, v)
		}
		return f.API.Enum, vals
	}
	return "", nil
}

// jsonType is the JSON type of the field's values.
func (f restField) jsonType() string {
	if f.API.Schema != "" || f.API.Ref != "" {
		return "object"
	}
	t, _ := baseType(f.Ent)
	return t
}

// plain is the field's bare JSON type, null included when it may be.
func (f restField) plain() *object {
	s := newObject()
	if f.Nillable() {
		s.set("type", []any{f.jsonType(), "null"})
	} else {
		s.set("type", f.jsonType())
	}
	if f.jsonType() == "array" {
		s.set("items", newObject().set("type", "string"))
	}
	return s
}

func baseType(f *gen.Field) (string, error) {
	switch {
	case isStrings(f):
		return "array", nil
	case f.IsString(), f.IsEnum(), f.IsTime():
		return "string", nil
	case f.IsBool():
		return "boolean", nil
	case f.Type.Type == field.TypeFloat32 || f.Type.Type == field.TypeFloat64:
		return "number", nil
	case f.Type.Numeric():
		return "integer", nil
	}
	return "", fmt.Errorf("ent type %s has no REST shape in rest/openapi/gen: teach baseType, give it api.Schema, or api.Hidden() it", f.Type)
}

// isStrings says whether the field is field.Strings: a JSON array of strings.
func isStrings(f *gen.Field) bool {
	return f.IsJSON() && f.Type.RType != nil && f.Type.RType.Ident == "[]string"
}

// schema is the field's schema in a response (response) or a request body,
// taking null when nullable.
func (f restField) schema(t *gen.Type, types []*gen.Type, response, nullable bool) (*object, error) {
	if f.Edge != nil {
		return f.edgeSchema(types)
	}
	s := newObject()
	enum, _ := f.enum(t)
	switch {
	case f.API.Schema != "":
		v, err := parse([]byte(f.API.Schema))
		if err != nil {
			return nil, fmt.Errorf("api.Schema: %w", err)
		}
		o, ok := v.(*object)
		if !ok {
			return nil, fmt.Errorf("api.Schema is not an object")
		}
		s = o
	case f.API.Ref != "":
		s.set("$ref", "#/components/schemas/"+f.API.Ref)
	case enum != "" && isStrings(f.Ent):
		s.set("type", "array").set("items", newObject().set("$ref", "#/components/schemas/"+enum))
	case enum != "":
		s.set("$ref", "#/components/schemas/"+enum)
	case f.Ent.IsTime():
		s.set("$ref", "#/components/schemas/Timestamp")
	case isStrings(f.Ent):
		s.set("type", "array").set("items", newObject().set("type", "string"))
	default:
		s.set("type", f.jsonType())
		if p := f.prefix(t); p != "" {
			s.set("pattern", "^"+p)
		} else if f.API.Pattern != "" {
			s.set("pattern", f.API.Pattern)
		}
		if f.API.Format != "" {
			s.set("format", f.API.Format)
		}
	}
	if d := f.description(response); d != "" {
		s.set("description", d)
	}
	f.bounds(s, response)
	if nullable {
		s = orNull(s)
	}
	return s, nil
}

// description is the field's in a response or a request body.
func (f restField) description(response bool) string {
	if !response && f.API.Request != "" {
		return f.API.Request
	}
	if f.API.Describe != "" {
		return f.API.Describe
	}
	if f.Edge != nil {
		return f.Edge.Comment()
	}
	return f.Ent.Comment()
}

// bounds adds the lengths, range and uniqueness the annotations state: in a
// request body, no length of a value the server trims, nor uniqueness (the
// server drops duplicates).
func (f restField) bounds(s *object, response bool) {
	minLen, maxLen := "minLength", "maxLength"
	if t, _ := s.get("type"); t == "array" {
		minLen, maxLen = "minItems", "maxItems"
	}
	if response || !f.API.Trimmed {
		if n := f.API.MinLength; n != nil && *n > 0 {
			s.set(minLen, *n)
		}
		if n := f.API.MaxLength; n != nil {
			s.set(maxLen, *n)
		}
	}
	if n := f.API.Minimum; n != nil {
		s.set("minimum", *n)
	}
	if n := f.API.Maximum; n != nil {
		s.set("maximum", *n)
	}
	if response && f.API.Unique {
		s.set("uniqueItems", true)
	}
}

// orNull makes a schema take null too.
func orNull(s *object) *object {
	if ref, ok := s.get("$ref"); ok {
		n := newObject().set("anyOf", []any{newObject().set("$ref", ref), newObject().set("type", "null")})
		if d, ok := s.get("description"); ok {
			n.set("description", d)
		}
		return n
	}
	t, _ := s.get("type")
	s.set("type", []any{t, "null"})
	return s
}

// edgeSchema is an annotated edge's schema: its target's field api.Of, or
// its target resource, or an array of them.
func (f restField) edgeSchema(types []*gen.Type) (*object, error) {
	target := f.Edge.Type
	r, err := shape.Type(target)
	if err != nil {
		return nil, err
	}
	if f.API.Of != "" {
		if !f.Edge.Unique {
			return nil, fmt.Errorf("edge %s: api.Of needs a unique edge", f.Edge.Name)
		}
		fields, err := restFields(target)
		if err != nil {
			return nil, err
		}
		for _, tf := range fields {
			if tf.Ent != nil && tf.Ent.Name == f.API.Of {
				if f.API.Describe != "" {
					tf.API.Describe = f.API.Describe
				}
				return tf.schema(target, types, true, tf.Nillable())
			}
		}
		return nil, fmt.Errorf("edge %s: %s shows no field %s", f.Edge.Name, target.Name, f.API.Of)
	}
	if r.Resource == "" {
		return nil, fmt.Errorf("edge %s: %s is no api.Resource", f.Edge.Name, target.Name)
	}
	ref := newObject().set("$ref", "#/components/schemas/"+r.Resource)
	s := ref
	if !f.Edge.Unique {
		s = newObject().set("type", "array").set("items", ref)
	}
	if d := f.description(true); d != "" {
		s.set("description", d)
	}
	f.bounds(s, true)
	return s, nil
}

// prefix is the id prefix of the field's values: the type's own for its id,
// the edge's target's for an edge field.
func (f restField) prefix(t *gen.Type) string {
	target := t
	if !f.ID {
		target = nil
		for _, e := range t.Edges {
			if ef := e.Field(); ef != nil && ef.Name == f.Ent.Name {
				target = e.Type
			}
		}
	}
	if target == nil {
		return ""
	}
	var p struct{ Prefix string }
	_ = shape.Decode(target.Annotations, "PULID", &p)
	return p.Prefix
}

// enumName is the enum's component name: GraphQL's (entgql.Type), else
// the type's name and the field's.
func enumName(t *gen.Type, f *gen.Field) string {
	var a gqlAnnotation
	_ = shape.Decode(f.Annotations, "EntGQL", &a)
	if a.Type != "" {
		return a.Type
	}
	return t.Name + f.StructField()
}
