// Package shape reads a resource's REST shape off ent's loaded graph by the
// rules of package api: which fields a client sees, which it may set, and
// which the server keeps. The code generators share it (ent/entc.go for the
// Go shapes and decoders, rest/openapi/gen for the OpenAPI components), so
// that they cannot disagree; the server does not link it.
package shape

import (
	"encoding/json"
	"fmt"

	"entgo.io/ent/entc/gen"

	"github.com/acme/itemsvc/ent/schema/api"
)

// API returns the field's api annotation, merged (zero when it has none).
func API(f *gen.Field) (api.Annotation, error) {
	var a api.Annotation
	if err := Decode(f.Annotations, a.Name(), &a); err != nil {
		return a, fmt.Errorf("field %s: %w", f.Name, err)
	}
	return a, nil
}

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

// Visible reports whether clients see the field: every field but those
// annotated api.Hidden.
func Visible(f *gen.Field) (bool, error) {
	a, err := API(f)
	return !a.Hidden, err
}

// Settable reports whether a client may set the field, on create and on
// update: a visible field that is neither Immutable nor kept by the server
// (UpdateDefault).
func Settable(f *gen.Field) (bool, error) {
	v, err := Visible(f)
	return v && !f.Immutable && !f.UpdateDefault, err
}

// Kept reports whether the server moves the field on its own (UpdateDefault):
// an update may carry any value of it, which is ignored.
func Kept(f *gen.Field) bool { return f.UpdateDefault }

// Fields are the fields clients see, in the order of the resource's JSON:
// the type's own, then those of its mixins. The id is not among them (it is
// t.ID, first in every shape).
func Fields(t *gen.Type) ([]*gen.Field, error) {
	var own, mixed []*gen.Field
	for _, f := range t.Fields {
		v, err := Visible(f)
		if err != nil {
			return nil, err
		}
		switch {
		case !v:
		case f.Position != nil && f.Position.MixedIn:
			mixed = append(mixed, f)
		default:
			own = append(own, f)
		}
	}
	return append(own, mixed...), nil
}
