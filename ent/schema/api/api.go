// Package api holds the annotations that shape a resource in REST's OpenAPI
// document (rest/openapi/gen) where ent's own declaration does not say it.
//
// A type is a REST resource when annotated Resource (its schema's name), and
// List when it has a list (its operation in the skeleton). Its fields then
// need none: the generator shows every field in the resource's schema except
// Sensitive ones, lets clients set every field that is neither Immutable nor
// kept by the server (UpdateDefault), and requires on create those without a
// default. An annotation opts a field out of that (Hidden, NoSort,
// CreateOnly, NoCreate, Kept, Optional) or adds what ent cannot express
// (Length, Range, Min, Nullable, Format, Pattern, Enum, Ref, Schema, Unique,
// Filter, FilterList, Describe, Request, Once, Rename). An edge is shown only
// when it carries an annotation (Of, or any other). The server links this
// package with the schemas, so it holds plain values only.
package api

import (
	"maps"

	"entgo.io/ent/schema"
)

// Annotation is the REST shape of one type, field or edge. Several on one
// merge.
type Annotation struct {
	// Resource, on a type, is the name of its schema in the document; the
	// request bodies are named after it (ItemCreate, ItemUpdate), as is the
	// variant with its secret (APIKeyWithSecret, see Once).
	Resource string `json:"resource,omitempty"`
	// List, on a type, is the operationId of its list in the skeleton,
	// which takes the generated list parameters (Filter, the sort);
	// Params prefixes the names of those parameters' components, the same
	// field names of several resources being different parameters.
	List   string `json:"list,omitempty"`
	Params string `json:"params,omitempty"`
	// ReadOnly, on a type, says that clients never send it: no request
	// bodies are generated.
	ReadOnly bool `json:"read_only,omitempty"`
	// Fields, on a type, annotates fields it does not declare itself: the
	// id and those of its mixins.
	Fields map[string]Annotation `json:"fields,omitempty"`

	// Hidden keeps the field out of every REST body (internal/resource
	// does not carry it either).
	Hidden bool `json:"hidden,omitempty"`
	// NoSort keeps a field GraphQL may order by (entgql.OrderField) out of
	// REST's sort parameter; on a type, its list has no sort parameter.
	NoSort bool `json:"no_sort,omitempty"`
	// As is the field's name on REST when it is not ent's.
	As string `json:"as,omitempty"`
	// Describe is the field's description in the resource's schema (else
	// its Comment); Request, in the request bodies (else the former).
	Describe string `json:"describe,omitempty"`
	Request  string `json:"request,omitempty"`
	// MinLength and MaxLength bound a string as the server stores it, in
	// characters, or an array in elements; nil when unbounded.
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	// Trimmed says the server trims the value a client sends before
	// checking its length, so a request body states no bounds.
	Trimmed bool `json:"trimmed,omitempty"`
	// Minimum and Maximum bound a number; nil when unbounded.
	Minimum *int `json:"minimum,omitempty"`
	Maximum *int `json:"maximum,omitempty"`
	// Nullable says REST shows null for a field ent does not hold nil
	// (a value that means nothing in some states).
	Nullable bool `json:"nullable,omitempty"`
	// Format is the string's OpenAPI format (uri, email).
	Format string `json:"format,omitempty"`
	// Pattern is the pattern of the values the server writes (ids of
	// another resource the field has no edge to, secrets).
	Pattern string `json:"pattern,omitempty"`
	// Unique says an array the server writes holds each value once.
	Unique bool `json:"unique,omitempty"`
	// Enum names the enum a string field's values (or a strings field's
	// elements) are, listed in Values; a component of that name.
	Enum   string   `json:"enum,omitempty"`
	Values []string `json:"values,omitempty"`
	// Ref is the component a field's value is (a resource kept as its
	// JSON); Schema, the JSON schema of a JSON field ent's type does not
	// describe.
	Ref    string `json:"ref,omitempty"`
	Schema string `json:"schema,omitempty"`
	// Of, on a unique edge, shows that field of its target (Delivery's
	// event is its event's type); an edge without it shows the target
	// resource, or an array of them.
	Of string `json:"of,omitempty"`
	// Once keeps the field out of the resource's schema and its requests:
	// it is the secret the server shows once, in the variant
	// <Resource>WithSecret.
	Once bool `json:"once,omitempty"`
	// CreateOnly lets a client set an Immutable field on create; on update
	// it is read-only. NoCreate keeps a field a client may update out of
	// the create body. Kept marks a field the server moves (as
	// UpdateDefault does): no client sets it, an update accepts and
	// ignores it. Optional lets a create leave out a field without a
	// default (the server picks it).
	CreateOnly bool `json:"create_only,omitempty"`
	NoCreate   bool `json:"no_create,omitempty"`
	Kept       bool `json:"kept,omitempty"`
	Optional   bool `json:"optional,omitempty"`
	// Filter, when set, is the description of the list parameter of the
	// field's name that keeps only the resources with that value;
	// FilterList says it takes several, comma-separated. Param names the
	// parameter when it is not the field's REST name.
	Filter     string `json:"filter,omitempty"`
	FilterList bool   `json:"filter_list,omitempty"`
	Param      string `json:"param,omitempty"`
}

// Name implements schema.Annotation.
func (Annotation) Name() string { return "API" }

// Merge implements schema.Merger: the annotations of one type, field or
// edge add up.
func (a Annotation) Merge(other schema.Annotation) schema.Annotation {
	var o Annotation
	switch v := other.(type) {
	case Annotation:
		o = v
	case *Annotation:
		if v == nil {
			return a
		}
		o = *v
	default:
		return a
	}
	a.Hidden = a.Hidden || o.Hidden
	a.NoSort = a.NoSort || o.NoSort
	a.Trimmed = a.Trimmed || o.Trimmed
	a.ReadOnly = a.ReadOnly || o.ReadOnly
	a.Unique = a.Unique || o.Unique
	a.Nullable = a.Nullable || o.Nullable
	a.Once = a.Once || o.Once
	a.CreateOnly = a.CreateOnly || o.CreateOnly
	a.NoCreate = a.NoCreate || o.NoCreate
	a.Kept = a.Kept || o.Kept
	a.Optional = a.Optional || o.Optional
	a.FilterList = a.FilterList || o.FilterList
	for _, p := range []struct{ dst, src **int }{
		{&a.MinLength, &o.MinLength}, {&a.MaxLength, &o.MaxLength},
		{&a.Minimum, &o.Minimum}, {&a.Maximum, &o.Maximum},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	for _, s := range []struct{ dst, src *string }{
		{&a.Resource, &o.Resource}, {&a.List, &o.List}, {&a.Params, &o.Params},
		{&a.As, &o.As}, {&a.Describe, &o.Describe}, {&a.Request, &o.Request},
		{&a.Format, &o.Format}, {&a.Pattern, &o.Pattern}, {&a.Enum, &o.Enum},
		{&a.Ref, &o.Ref}, {&a.Schema, &o.Schema}, {&a.Of, &o.Of}, {&a.Filter, &o.Filter}, {&a.Param, &o.Param},
	} {
		if *s.src != "" {
			*s.dst = *s.src
		}
	}
	if o.Values != nil {
		a.Values = o.Values
	}
	if len(o.Fields) > 0 {
		fields := maps.Clone(a.Fields)
		if fields == nil {
			fields = map[string]Annotation{}
		}
		for name, f := range o.Fields {
			fields[name] = fields[name].Merge(f).(Annotation)
		}
		a.Fields = fields
	}
	return a
}

// Resource makes the type a REST resource, its schema so named.
func Resource(name string) Annotation { return Annotation{Resource: name} }

// List names the resource's list operation in the skeleton and the prefix
// of its list parameters' component names.
func List(operationID, params string) Annotation {
	return Annotation{List: operationID, Params: params}
}

// ReadOnly says clients never send the resource: it has no request bodies.
func ReadOnly() Annotation { return Annotation{ReadOnly: true} }

// Field annotates the type's field name that the type does not declare
// itself (its id, a mixin's field).
func Field(name string, as ...Annotation) Annotation {
	var f Annotation
	for _, a := range as {
		f = f.Merge(a).(Annotation)
	}
	return Annotation{Fields: map[string]Annotation{name: f}}
}

// Hidden keeps the field out of REST's bodies.
func Hidden() Annotation { return Annotation{Hidden: true} }

// NoSort keeps the field out of REST's sort parameter; on a type, its list
// has none.
func NoSort() Annotation { return Annotation{NoSort: true} }

// Rename is the field's name on REST.
func Rename(name string) Annotation { return Annotation{As: name} }

// Describe is the field's description in the resource's schema.
func Describe(description string) Annotation { return Annotation{Describe: description} }

// Request is the field's description in the request bodies.
func Request(description string) Annotation { return Annotation{Request: description} }

// Length bounds a string field in characters, or an array in elements (max
// 0: unbounded above).
func Length(min, max int) Annotation {
	a := Annotation{MinLength: &min}
	if max > 0 {
		a.MaxLength = &max
	}
	return a
}

// Trimmed says the server trims what a client sends before checking it.
func Trimmed() Annotation { return Annotation{Trimmed: true} }

// Min bounds a number below.
func Min(min int) Annotation { return Annotation{Minimum: &min} }

// Range bounds a number on both sides.
func Range(min, max int) Annotation { return Annotation{Minimum: &min, Maximum: &max} }

// Nullable says REST shows null for the field at times.
func Nullable() Annotation { return Annotation{Nullable: true} }

// Format is the string's OpenAPI format.
func Format(format string) Annotation { return Annotation{Format: format} }

// Pattern is the pattern of the values the server writes.
func Pattern(pattern string) Annotation { return Annotation{Pattern: pattern} }

// Unique says an array the server writes holds each value once.
func Unique() Annotation { return Annotation{Unique: true} }

// Enum says the string field's values (a strings field's elements) are
// those of the enum name.
func Enum(name string, values ...string) Annotation { return Annotation{Enum: name, Values: values} }

// Ref says the field's value is the component name.
func Ref(name string) Annotation { return Annotation{Ref: name} }

// Schema is the JSON schema of a JSON field, verbatim.
func Schema(jsonSchema string) Annotation { return Annotation{Schema: jsonSchema} }

// Of shows that field of a unique edge's target.
func Of(field string) Annotation { return Annotation{Of: field} }

// Once makes the field the secret shown once, in <Resource>WithSecret only.
func Once() Annotation { return Annotation{Once: true} }

// CreateOnly lets a client set the field on create only.
func CreateOnly() Annotation { return Annotation{CreateOnly: true} }

// NoCreate keeps the field out of the create body.
func NoCreate() Annotation { return Annotation{NoCreate: true} }

// Kept says the server moves the field: an update accepts and ignores it.
func Kept() Annotation { return Annotation{Kept: true} }

// Optional lets a create leave the field out; the server picks it.
func Optional() Annotation { return Annotation{Optional: true} }

// Filter makes the field a filter of the resource's list, described so.
func Filter(description string) Annotation { return Annotation{Filter: description} }

// FilterList makes the field a filter that takes several values, comma
// separated, as the list parameter param.
func FilterList(param, description string) Annotation {
	return Annotation{Filter: description, FilterList: true, Param: param}
}
