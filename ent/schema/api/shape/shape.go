// Package shape reads a resource's REST shape off ent's loaded graph by the
// rules of package api: which fields a client sees, under which names, and
// which it may set on create and on update. The code generators share it
// (ent/entc_rest.go for the Go shapes, decoders and entgql's inputs,
// rest/openapi/gen for the OpenAPI components), so that they cannot
// disagree; the server does not link it.
package shape

import (
	"encoding/json"
	"fmt"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc/gen"

	"github.com/acme/itemsvc/ent/schema/api"
)

// Decode decodes the annotation of that name (a value after
// entc.LoadGraph, or a map read back from JSON) into v; v is left as it is
// when there is none.
func Decode(as gen.Annotations, name string, v any) error {
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

// Type is the type's own api annotation (api.Resource, api.List, api.Field…).
func Type(t *gen.Type) (api.Annotation, error) {
	var a api.Annotation
	if err := Decode(t.Annotations, a.Name(), &a); err != nil {
		return a, fmt.Errorf("type %s: %w", t.Name, err)
	}
	return a, nil
}

// Field is a field of a resource as REST shows it: an ent field, the id,
// or an edge annotated for it.
type Field struct {
	// Name is its name in REST's JSON (ent's, or api.Rename's).
	Name string
	// Ent is the ent field; nil for an edge.
	Ent *gen.Field
	// Edge is the edge shown; nil for a field.
	Edge *gen.Edge
	// API is its annotation, the type's api.Field for it merged in.
	API api.Annotation
	// ID marks the resource's id.
	ID bool
	// Clearable marks an optional field of a Writable type: null in an
	// update body clears it (GraphQL's clear<Field>).
	Clearable bool
}

// Writable reports whether clients write t through the inputs entgql
// generates (entgql.Mutations), which REST decodes too (ent/entc_rest.go).
func Writable(t *gen.Type) (bool, error) {
	var a entgql.Annotation
	if err := Decode(t.Annotations, a.Name(), &a); err != nil {
		return false, fmt.Errorf("type %s: %w", t.Name, err)
	}
	return len(a.MutationInputs) > 0, nil
}

// Creatable reports whether a client may set the field on create: a field
// that is neither the id, nor shown once, nor kept by the server, nor
// api.NoCreate, nor Immutable unless api.CreateOnly.
func (f Field) Creatable() bool {
	return f.Edge == nil && !f.ID && !f.API.Once && !f.Kept() && !f.API.NoCreate &&
		(!f.Ent.Immutable || f.API.CreateOnly)
}

// Updatable reports whether a client may change the field.
func (f Field) Updatable() bool {
	return f.Edge == nil && !f.ID && !f.API.Once && !f.Kept() && !f.API.CreateOnly && !f.Ent.Immutable
}

// Kept reports whether the server moves the field on its own
// (UpdateDefault, api.Kept): an update may carry any value of it, ignored.
func (f Field) Kept() bool {
	return f.Ent != nil && (f.Ent.UpdateDefault || f.API.Kept)
}

// Nillable reports whether the field's value may be null.
func (f Field) Nillable() bool {
	return f.Ent != nil && (f.Ent.Nillable || f.API.Nullable)
}

// Fields are the fields REST shows of t, in the order of the resource's
// JSON: the id, the type's own fields, its annotated edges, then the fields
// of its mixins. A field annotated api.Hidden, or Sensitive but not
// api.Once, is not among them.
func Fields(t *gen.Type) ([]Field, error) {
	r, err := Type(t)
	if err != nil {
		return nil, err
	}
	writable, err := Writable(t)
	if err != nil {
		return nil, err
	}
	var own, edges, mixed []Field
	for _, f := range t.Fields {
		sf := Field{Name: f.Name, Ent: f}
		if err := Decode(f.Annotations, sf.API.Name(), &sf.API); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if a, ok := r.Fields[f.Name]; ok {
			sf.API = sf.API.Merge(a).(api.Annotation)
		}
		if sf.API.Hidden || f.Sensitive() && !sf.API.Once {
			continue
		}
		if sf.API.As != "" {
			sf.Name = sf.API.As
		}
		sf.Clearable = writable && f.Optional && sf.Updatable()
		if f.Position != nil && f.Position.MixedIn {
			mixed = append(mixed, sf)
		} else {
			own = append(own, sf)
		}
	}
	for _, e := range t.Edges {
		if _, ok := e.Annotations[api.Annotation{}.Name()]; !ok {
			continue
		}
		sf := Field{Name: e.Name, Edge: e}
		if err := Decode(e.Annotations, sf.API.Name(), &sf.API); err != nil {
			return nil, fmt.Errorf("edge %s: %w", e.Name, err)
		}
		if sf.API.Hidden {
			continue
		}
		if sf.API.As != "" {
			sf.Name = sf.API.As
		}
		edges = append(edges, sf)
	}
	out := append(append(own, edges...), mixed...)
	id := Field{Name: "id", Ent: t.ID, ID: true, API: r.Fields["id"]}
	if id.API.Hidden {
		return out, nil
	}
	return append([]Field{id}, out...), nil
}
