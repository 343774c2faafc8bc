// Package api holds the annotations that shape a field in REST's OpenAPI
// document (rest/openapi/gen) where ent's own declaration does not say it.
//
// Plain fields need none: the generator shows every field in the resource's
// schema, lets clients set every field that is neither Immutable nor kept by
// the server (UpdateDefault), and requires on create those without a default.
// An annotation opts a field out of that (Hidden, NoSort) or adds what ent
// cannot express (Length, Filter). The server links this package with the
// schemas, so it holds plain values only.
package api

import "entgo.io/ent/schema"

// Annotation is the REST shape of one field. Several on a field merge.
type Annotation struct {
	// Hidden keeps the field out of every REST body (internal/resource
	// does not carry it either).
	Hidden bool `json:"hidden,omitempty"`
	// NoSort keeps a field GraphQL may order by (entgql.OrderField) out of
	// REST's sort parameter.
	NoSort bool `json:"no_sort,omitempty"`
	// MinLength and MaxLength bound a string as the server stores it, in
	// characters; nil when unbounded.
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	// Trimmed says the server trims the value a client sends before
	// checking its length, so a request body states no bounds.
	Trimmed bool `json:"trimmed,omitempty"`
	// Filter, when set, is the description of the list parameter of the
	// field's name that keeps only the resources with that value.
	Filter string `json:"filter,omitempty"`
}

// Name implements schema.Annotation.
func (Annotation) Name() string { return "API" }

// Merge implements schema.Merger: the annotations of one field add up.
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
	if o.MinLength != nil {
		a.MinLength = o.MinLength
	}
	if o.MaxLength != nil {
		a.MaxLength = o.MaxLength
	}
	if o.Filter != "" {
		a.Filter = o.Filter
	}
	return a
}

// Hidden keeps the field out of REST's bodies.
func Hidden() Annotation { return Annotation{Hidden: true} }

// NoSort keeps the field out of REST's sort parameter.
func NoSort() Annotation { return Annotation{NoSort: true} }

// Length bounds a string field in characters (max 0: unbounded above).
func Length(min, max int) Annotation {
	a := Annotation{MinLength: &min}
	if max > 0 {
		a.MaxLength = &max
	}
	return a
}

// Trimmed says the server trims what a client sends before checking it.
func Trimmed() Annotation { return Annotation{Trimmed: true} }

// Filter makes the field a filter of the resource's list, described so.
func Filter(description string) Annotation { return Annotation{Filter: description} }
