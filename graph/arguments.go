package graph

import "github.com/vektah/gqlparser/v2/ast"

// Argument is f.ArgumentMap(vars)[name], without the map of every argument
// that ArgumentMap builds (an item connection has six). The resolvers read a
// connection's where with it, and the server (graph/server) its page and
// filter as it prices the operation. f must be a field of a validated
// document: a value that does not coerce panics, as ArgumentMap does.
func Argument(f *ast.Field, name string, vars map[string]any) any {
	def := f.Definition.Arguments.ForName(name)
	if def == nil {
		return nil
	}
	if a := f.Arguments.ForName(name); a != nil {
		if a.Value.Kind == ast.Variable {
			if v, ok := vars[a.Value.Raw]; ok {
				return v
			}
		} else {
			v, err := a.Value.Value(vars)
			if err != nil {
				panic(err) // as ArgumentMap does: the document was validated
			}
			return v
		}
	}
	if def.DefaultValue == nil {
		return nil
	}
	v, err := def.DefaultValue.Value(vars)
	if err != nil {
		panic(err)
	}
	return v
}
