package server

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// A bad input value that gqlgen refuses before any resolver runs (an
// unknown enum value, a string where an Int goes) is VALIDATION_ERROR, as
// everything GraphQL refuses is; this file makes it name the argument or
// input field in extensions.field, with extensions.reason, as the service's
// own validation errors and REST's do. An enum's reason lists its values,
// in the service's words and GraphQL's spelling ("must be one of: ACTIVE,
// ARCHIVED", where REST says active, archived).

// validationRules are gqlgen's default rules with ValuesOfCorrectType
// naming the field of each value it refuses.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	for _, rule := range []core.Rule{rules.ValuesOfCorrectTypeRule, rules.ValuesOfCorrectTypeRuleWithoutSuggestions} {
		if _, ok := r.GetInner()[rule.Name]; ok {
			r.ReplaceRule(rule.Name, namingFields(rule.RuleFunc))
		}
	}
	return r
}

// namingFields wraps a rule that reports bad values: each error it reports
// gets the name of the argument or input field whose value it refused. The
// walker calls the value observers in order for every value, so the
// observer added first knows the value the rule's own observer is about to
// judge.
func namingFields(rule core.RuleFunc) core.RuleFunc {
	return func(observers *core.Events, addError core.AddErrFunc) {
		var cur *ast.Value
		var doc *ast.QueryDocument
		observers.OnValue(func(w *core.Walker, v *ast.Value) {
			cur, doc = v, w.Document
		})
		rule(observers, func(options ...core.ErrorOption) {
			if v := cur; v != nil {
				options = append(options, func(err *gqlerror.Error) {
					if name := missingField(v, err.Message); name != "" {
						setField(err, name, requiredReason)
					} else if name := valueName(doc, func(x *ast.Value) bool { return x == v }); name != "" {
						setField(err, name, reasonFor(v.Definition, err.Message))
					}
				})
			}
			addError(options...)
		})
	}
}

// requiredReason is REST's reason for a required field that is absent.
const requiredReason = "is required"

// missingField names the required input field that the validator's message
// says an input object value lacks (createItem(input: {}) lacks name), or
// is "": the refused value is then the object itself.
func missingField(v *ast.Value, message string) string {
	if v.Kind != ast.ObjectValue || v.Definition == nil {
		return ""
	}
	for _, f := range v.Definition.Fields {
		if f.Type.NonNull && v.Children.ForName(f.Name) == nil &&
			strings.Contains(message, `"`+v.Definition.Name+"."+f.Name+`"`) {
			return f.Name
		}
	}
	return ""
}

// setField adds field and reason to err's extensions.
func setField(err *gqlerror.Error, field, reason string) {
	if err.Extensions == nil {
		err.Extensions = map[string]any{}
	}
	err.Extensions["field"] = field
	err.Extensions["reason"] = reason
}

// reasonFor says what a value of def must be: one of an enum's values, or
// else what the validator said.
func reasonFor(def *ast.Definition, message string) string {
	if def != nil && def.Kind == ast.Enum {
		values := make([]string, len(def.EnumValues))
		for i, v := range def.EnumValues {
			values[i] = v.Name
		}
		return "must be one of: " + strings.Join(values, ", ")
	}
	return strings.TrimSuffix(message, ".")
}

// valueName finds the first value in doc that match accepts and returns
// the name of the argument or input field it is the value of (for an element
// of a list, the list's), or "". It runs only for a refused value.
func valueName(doc *ast.QueryDocument, match func(*ast.Value) bool) string {
	if doc == nil {
		return ""
	}
	var inValue func(name string, val *ast.Value) string
	inValue = func(name string, val *ast.Value) string {
		if val == nil {
			return ""
		}
		if match(val) {
			return name
		}
		for _, c := range val.Children {
			n := c.Name
			if val.Kind == ast.ListValue {
				n = name
			}
			if found := inValue(n, c.Value); found != "" {
				return found
			}
		}
		return ""
	}
	inArgs := func(args ast.ArgumentList) string {
		for _, a := range args {
			if found := inValue(a.Name, a.Value); found != "" {
				return found
			}
		}
		return ""
	}
	inDirectives := func(list ast.DirectiveList) string {
		for _, d := range list {
			if found := inArgs(d.Arguments); found != "" {
				return found
			}
		}
		return ""
	}
	var inSet func(set ast.SelectionSet) string
	inSet = func(set ast.SelectionSet) string {
		for _, sel := range set {
			var found string
			switch s := sel.(type) {
			case *ast.Field:
				if found = inArgs(s.Arguments); found == "" {
					if found = inDirectives(s.Directives); found == "" {
						found = inSet(s.SelectionSet)
					}
				}
			case *ast.InlineFragment:
				if found = inDirectives(s.Directives); found == "" {
					found = inSet(s.SelectionSet)
				}
			case *ast.FragmentSpread:
				found = inDirectives(s.Directives)
			}
			if found != "" {
				return found
			}
		}
		return ""
	}
	for _, op := range doc.Operations {
		for _, vd := range op.VariableDefinitions {
			if found := inValue(vd.Variable, vd.DefaultValue); found != "" {
				return found
			}
		}
		if found := inDirectives(op.Directives); found != "" {
			return found
		}
		if found := inSet(op.SelectionSet); found != "" {
			return found
		}
	}
	for _, f := range doc.Fragments {
		if found := inSet(f.SelectionSet); found != "" {
			return found
		}
	}
	return ""
}

// variableField names the input field of a refused variable value: gqlgen
// reports it at a path such as ["variable", "in", "status"], and a variable
// that is a field's value whole (status: $s) is named after that field. The
// reason of an enum lists its values; the type is found by following the
// path from the variable's declared type. A required field or variable that
// is absent is REST's "is required".
func variableField(schema *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition, err *gqlerror.Error) {
	if len(err.Path) < 2 || err.Path[0] != ast.PathName("variable") {
		return
	}
	field := ""
	var typ *ast.Type
	for i, p := range err.Path[1:] {
		switch p := p.(type) {
		case ast.PathName:
			field = string(p)
			switch {
			case i == 0 && op != nil:
				if vd := op.VariableDefinitions.ForName(field); vd != nil {
					typ = vd.Type
				}
			case typ != nil && schema != nil:
				typ = fieldType(schema.Types[typ.Name()], field)
			}
		case ast.PathIndex:
			if typ != nil {
				typ = typ.Elem
			}
		}
	}
	if field == "" {
		return
	}
	if len(err.Path) == 2 {
		use := valueName(doc, func(v *ast.Value) bool { return v.Kind == ast.Variable && v.Raw == field })
		if use != "" {
			field = use
		}
	}
	var def *ast.Definition
	if typ != nil && schema != nil {
		def = schema.Types[typ.Name()]
	}
	reason := reasonFor(def, err.Message)
	if err.Message == "must be defined" {
		reason = requiredReason
	}
	setField(err, field, reason)
}

// fieldType is the type of input field name of def, or nil.
func fieldType(def *ast.Definition, name string) *ast.Type {
	if def == nil {
		return nil
	}
	if f := def.Fields.ForName(name); f != nil {
		return f.Type
	}
	return nil
}
