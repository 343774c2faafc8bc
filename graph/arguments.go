package graph

import "github.com/vektah/gqlparser/v2/ast"

// argument is f.ArgumentMap(vars)[name], without the map of every argument
// that ArgumentMap builds (an item connection has six).
func argument(f *ast.Field, name string, vars map[string]any) any {
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
