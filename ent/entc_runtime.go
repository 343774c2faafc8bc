//go:build ignore

// The template functions of template/runtime.tmpl, which replaces ent's
// "runtime/register" template: the generated ent/runtime assigns the fields'
// default functions, constant defaults and validators by name, and takes
// mixins' hooks, interceptors and policies from the mixin types by name,
// instead of evaluating the schemas' Fields() and Mixin() at init (why:
// package ent/schema/named). Every value is reproduced exactly or generation
// fails: a default function or validator must be named by a
// named.Annotation (or be the id default of pulid.Mixin), a mixin with run-time
// code must be recorded with named.Mixin, and a constant default must be of a
// type written out below.

package main

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"entgo.io/ent/entc/gen"
	"entgo.io/ent/schema/field"

	"github.com/acme/itemsvc/ent/schema/named"
	"github.com/acme/itemsvc/ent/schema/pulid"
)

// runtimeFuncs are the functions template/runtime.tmpl calls.
var runtimeFuncs = template.FuncMap{
	"namedImports": namedImports,
	"namedInit":    namedInit,
	"namedMixin":   namedMixin,
}

// pulidPath is the import path of the id mixin, whose New makes id defaults.
var pulidPath = reflect.TypeOf(pulid.Annotation{}).PkgPath()

// runtimeFields are the fields of n whose defaults and validators the
// runtime sets, in the order of ent's own template.
func runtimeFields(n *gen.Type) []*gen.Field {
	fields := n.Fields
	if n.HasOneFieldID() && n.ID.UserDefined {
		fields = append(fields[:len(fields):len(fields)], n.ID)
	}
	return fields
}

// fieldAnnotations decodes the named and pulid annotations of f.
func fieldAnnotations(f *gen.Field) (ff named.Annotation, id *pulid.Annotation, err error) {
	if raw, ok := f.Annotations[named.Annotation{}.Name()]; ok {
		if err := decode(raw, &ff); err != nil {
			return ff, nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	if raw, ok := f.Annotations[pulid.Annotation{}.Name()]; ok {
		id = new(pulid.Annotation)
		if err := decode(raw, id); err != nil {
			return ff, nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return ff, id, nil
}

// decode converts an annotation as the loader decoded it (JSON into a map)
// to its Go type.
func decode(raw any, v any) error {
	data, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// importAlias is the name generated code uses for the package at path.
func importAlias(p string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, path.Base(p))
}

// qualified is the Go expression naming a function recorded by named.
func qualified(full string) (string, error) {
	p, name, err := named.Split(full)
	if err != nil {
		return "", err
	}
	return importAlias(p) + "." + name, nil
}

// namedImports returns the import lines for the packages whose
// functions the runtime names. It fails when two of them, or one of them and
// a generated package, would share a name in the file.
func namedImports(cfg *gen.Config, nodes []*gen.Type) (string, error) {
	paths := map[string]bool{}
	for _, n := range nodes {
		for _, f := range runtimeFields(n) {
			ff, id, err := fieldAnnotations(f)
			if err != nil {
				return "", fmt.Errorf("%s.%w", n.Name, err)
			}
			names := append([]string{ff.Default, ff.UpdateDefault}, ff.Validators...)
			for _, full := range names {
				if full == "" {
					continue
				}
				p, _, err := named.Split(full)
				if err != nil {
					return "", fmt.Errorf("%s.%s: %w", n.Name, f.Name, err)
				}
				paths[p] = true
			}
			if id != nil {
				paths[pulidPath] = true
			}
		}
		mixins, err := runtimeMixins(n)
		if err != nil {
			return "", err
		}
		for _, full := range mixins {
			p, _, err := named.Split(full)
			if err != nil {
				return "", fmt.Errorf("%s: %w", n.Name, err)
			}
			paths[p] = true
		}
	}
	taken := map[string]string{ // names the rest of the file uses
		"context": "context", "time": "time", "ent": "entgo.io/ent",
		"privacy": "entgo.io/ent/privacy", "field": "entgo.io/ent/schema/field",
		importAlias(cfg.Schema): cfg.Schema,
	}
	for _, n := range nodes {
		name := n.PackageAlias()
		if name == "" {
			name = n.Package()
		}
		taken[name] = cfg.Package + "/" + n.PackageDir()
	}
	var lines []string
	for p := range paths {
		alias := importAlias(p)
		if other, ok := taken[alias]; ok && other != p {
			return "", fmt.Errorf("the runtime would import %s and %s as %s; rename a package", p, other, alias)
		}
		taken[alias] = p
		if p != cfg.Schema { // imported by the template already
			lines = append(lines, fmt.Sprintf("%s %q", alias, p))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}

// namedInit returns the statements that set the defaults and validators
// of n's fields, or an error for any the annotations do not account for.
func namedInit(n *gen.Type) (string, error) {
	var b strings.Builder
	pkg := n.Package()
	for _, f := range runtimeFields(n) {
		if err := fieldInit(&b, pkg, f); err != nil {
			return "", fmt.Errorf("%s.%s: %w", n.Name, f.Name, err)
		}
	}
	return b.String(), nil
}

// fieldInit writes the statements for one field.
func fieldInit(b *strings.Builder, pkg string, f *gen.Field) error {
	ff, id, err := fieldAnnotations(f)
	if err != nil {
		return err
	}
	if f.HasValueScanner() {
		return fmt.Errorf("value scanners are not supported by template/runtime.tmpl")
	}
	// Creation default. Enum defaults are constants of the type package.
	switch {
	case f.Default && !f.IsEnum() && f.DefaultFunc():
		var expr string
		switch {
		case ff.Default != "" && id != nil:
			return fmt.Errorf("both named and pulid name the default function")
		case ff.Default != "":
			if expr, err = qualified(ff.Default); err != nil {
				return err
			}
		case id != nil && f.Type.Type == field.TypeString && !f.HasGoType():
			expr = fmt.Sprintf("func() string { return %s.New(%q) }", importAlias(pulidPath), id.Prefix)
		default:
			return fmt.Errorf("the default function is not named: set it with named.Default or named.DefaultFunc")
		}
		fmt.Fprintf(b, "// %s.%s holds the default value on creation for the %s field.\n", pkg, f.DefaultName(), f.Name)
		fmt.Fprintf(b, "%s.%s = %s\n", pkg, f.DefaultName(), expr)
	case f.Default && !f.IsEnum():
		if ff.Default != "" {
			return fmt.Errorf("named names a default function but the default is a value")
		}
		lit, err := defaultLiteral(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "// %s.%s holds the default value on creation for the %s field.\n", pkg, f.DefaultName(), f.Name)
		fmt.Fprintf(b, "%s.%s = %s\n", pkg, f.DefaultName(), lit)
	case ff.Default != "":
		return fmt.Errorf("named names a default function ent does not call")
	}
	// Update default.
	switch {
	case f.UpdateDefault && ff.UpdateDefault == "":
		return fmt.Errorf("the update default is not named: set it with named.UpdateDefault")
	case f.UpdateDefault:
		expr, err := qualified(ff.UpdateDefault)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "// %s.%s holds the default value on update for the %s field.\n", pkg, f.UpdateDefaultName(), f.Name)
		fmt.Fprintf(b, "%s.%s = %s\n", pkg, f.UpdateDefaultName(), expr)
	case ff.UpdateDefault != "":
		return fmt.Errorf("named names an update default ent does not call")
	}
	// Validators: every one the field has, named, in order.
	if len(ff.Validators) != f.Validators {
		return fmt.Errorf("the field has %d validators and package named records %d: set every validator with named.Validate (named.NotEmpty for NotEmpty)", f.Validators, len(ff.Validators))
	}
	if f.Validators == 0 {
		return nil
	}
	fns := make([]string, len(ff.Validators))
	for i, full := range ff.Validators {
		if fns[i], err = qualified(full); err != nil {
			return err
		}
	}
	name := pkg + "." + f.Validator()
	fmt.Fprintf(b, "// %s is a validator for the %q field. It is called by the builders before save.\n", name, f.Name)
	if len(fns) == 1 {
		fmt.Fprintf(b, "%s = %s\n", name, fns[0])
		return nil
	}
	typ := f.Type.Type.String()
	if f.IsJSON() {
		typ = f.Type.String()
	}
	fmt.Fprintf(b, "%s = func(v %s) error {\n", name, typ)
	for _, fn := range fns {
		fmt.Fprintf(b, "if err := %s(v); err != nil {\nreturn err\n}\n", fn)
	}
	b.WriteString("return nil\n}\n")
	return nil
}

// defaultLiteral writes f's constant default as a Go literal of the field's
// type, for the types whose JSON form (how the loader hands defaults over)
// converts back exactly.
func defaultLiteral(f *gen.Field) (string, error) {
	v := f.DefaultValue()
	unsupported := fmt.Errorf("a %s default %#v is not supported by template/runtime.tmpl", f.Type, v)
	if f.HasGoType() && !f.IsJSON() {
		return "", unsupported
	}
	switch t := f.Type.Type; {
	case t == field.TypeString:
		if s, ok := v.(string); ok {
			return strconv.Quote(s), nil
		}
	case t == field.TypeBool:
		if x, ok := v.(bool); ok {
			return strconv.FormatBool(x), nil
		}
	case t >= field.TypeInt8 && t <= field.TypeInt64:
		// The loader hands numbers over as JSON (float64, then int64):
		// beyond 2^53 they are not exact.
		switch x := v.(type) {
		case int64:
			if x > -1<<53 && x < 1<<53 {
				return strconv.FormatInt(x, 10), nil
			}
		case float64:
			if x == float64(int64(x)) && x > -1<<53 && x < 1<<53 {
				return strconv.FormatInt(int64(x), 10), nil
			}
		}
	case t == field.TypeJSON && f.Type.String() == "[]string":
		list, ok := v.([]any)
		if !ok {
			break
		}
		elems := make([]string, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return "", unsupported
			}
			elems[i] = strconv.Quote(s)
		}
		return "[]string{" + strings.Join(elems, ", ") + "}", nil
	}
	return "", unsupported
}

// runtimeMixins maps the index of each mixin of n with hooks, interceptors
// or a policy to its type, as recorded by named.Mixin. It fails unless the
// recorded mixins are exactly those, with the same numbers of each.
func runtimeMixins(n *gen.Type) (map[int]string, error) {
	type code struct {
		hooks, inters int
		policy        bool
	}
	byIndex := map[int]*code{}
	at := func(i int) *code {
		if byIndex[i] == nil {
			byIndex[i] = new(code)
		}
		return byIndex[i]
	}
	for _, p := range n.HookPositions() {
		if p.MixedIn {
			at(p.MixinIndex).hooks++
		}
	}
	for _, p := range n.InterceptorPositions() {
		if p.MixedIn {
			at(p.MixinIndex).inters++
		}
	}
	for _, p := range n.PolicyPositions() {
		if p.MixedIn {
			at(p.MixinIndex).policy = true
		}
	}
	var recorded named.Mixins
	if raw, ok := n.Annotations[recorded.Name()]; ok {
		if err := decode(raw, &recorded); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	var list []named.MixinType
	for _, m := range recorded.List {
		if m.Hooks > 0 || m.Interceptors > 0 || m.Policy {
			list = append(list, m)
		}
	}
	indexes := make([]int, 0, len(byIndex))
	for i := range byIndex {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	if len(list) != len(indexes) {
		return nil, fmt.Errorf("%s: %d mixins have hooks, interceptors or a policy and %d are recorded: each must return named.Mixin(T{}) from its Annotations", n.Name, len(indexes), len(list))
	}
	types := make(map[int]string, len(indexes))
	for k, i := range indexes {
		c, m := byIndex[i], list[k]
		if c.hooks != m.Hooks || c.inters != m.Interceptors || c.policy != m.Policy {
			return nil, fmt.Errorf("%s: mixin %d has %d hooks, %d interceptors, policy %v; the recorded %s has %d, %d, %v", n.Name, i, c.hooks, c.inters, c.policy, m.Type, m.Hooks, m.Interceptors, m.Policy)
		}
		types[i] = m.Type
	}
	return types, nil
}

// namedMixin returns the Go expression for mixin i of n: T{}.
func namedMixin(n *gen.Type, i int) (string, error) {
	types, err := runtimeMixins(n)
	if err != nil {
		return "", err
	}
	full, ok := types[i]
	if !ok {
		return "", fmt.Errorf("%s: mixin %d has no run-time code", n.Name, i)
	}
	expr, err := qualified(full)
	if err != nil {
		return "", err
	}
	return expr + "{}", nil
}
