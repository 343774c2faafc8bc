package server

import (
	"errors"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/service"
)

// A connection's `where` is checked and measured before the operation
// runs, from the schema's input types (any *WhereInput, at any depth of
// the operation: ent's field collection loads nested connections with
// their filters without a resolver seeing them). The bounds are the
// service's (service.MaxFilter*); the size prices the filter (cost.go).

// filterSize is what a filter asks of the database.
type filterSize struct {
	// predicates are the fields given, at every level.
	predicates int
	// values are the elements of the lists given (In, NotIn, and, or,
	// has…With).
	values int
}

// terms is what MaxFilterTerms bounds.
func (s filterSize) terms() int { return s.predicates + s.values }

// measureFilter checks the value v of a filter of input type def (a
// coerced argument: maps, lists and scalars) against the service's bounds
// and measures it. The first bound it passes is a VALIDATION_ERROR naming
// the field; walking stops there, so that measuring a hostile filter costs
// no more than one at the bounds.
func measureFilter(schema *ast.Schema, def *ast.Definition, v any) (filterSize, *apperr.Error) {
	m := filterMeasure{schema: schema}
	err := m.object(def, v, 1)
	return m.size, err
}

type filterMeasure struct {
	schema *ast.Schema
	size   filterSize
}

func (m *filterMeasure) object(def *ast.Definition, v any, depth int) *apperr.Error {
	obj, ok := v.(map[string]any)
	if !ok || def == nil {
		return nil // null, or not coerced: gqlgen refuses it
	}
	if depth > service.MaxFilterDepth {
		return apperr.Validation("where", fmt.Sprintf("must not nest and, or, not and has…With more than %d levels deep", service.MaxFilterDepth))
	}
	for _, field := range def.Fields { // in the schema's order: the same field is named every time
		x, ok := obj[field.Name]
		if !ok || x == nil {
			continue
		}
		m.size.predicates++
		if err := m.count(); err != nil {
			return err
		}
		typ := m.schema.Types[field.Type.Name()]
		if field.Type.Elem == nil {
			if err := m.value(field.Name, typ, x, depth); err != nil {
				return err
			}
			continue
		}
		list, ok := x.([]any)
		if !ok {
			list = []any{x} // one value stands for a list of one
		}
		if err := service.CheckFilterValues(field.Name, len(list)); err != nil {
			return validation(err)
		}
		for _, e := range list {
			m.size.values++
			if err := m.count(); err != nil {
				return err
			}
			if err := m.value(field.Name, typ, e, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// value checks one value of the field name, of type typ.
func (m *filterMeasure) value(name string, typ *ast.Definition, v any, depth int) *apperr.Error {
	if typ != nil && typ.Kind == ast.InputObject {
		return m.object(typ, v, depth+1)
	}
	if s, ok := v.(string); ok {
		if err := service.CheckFilterText(name, s); err != nil {
			return validation(err)
		}
	}
	return nil
}

func (m *filterMeasure) count() *apperr.Error {
	if m.size.terms() > service.MaxFilterTerms {
		return apperr.Validation("where", fmt.Sprintf("must hold at most %d conditions and values in all", service.MaxFilterTerms))
	}
	return nil
}

// validation is the *apperr.Error the service's checks return.
func validation(err error) *apperr.Error {
	var e *apperr.Error
	if errors.As(err, &e) {
		return e
	}
	return apperr.Validation("where", err.Error())
}
