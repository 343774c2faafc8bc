// Package named records the Go names of a schema's run-time code (a field's
// default and update-default functions and validators, and the mixins whose
// hooks, interceptors or policy the schema takes) for the code generator.
//
// ent's generated runtime normally evaluates every schema's Fields() at init
// to take those functions out of the field descriptors. That links the field
// builders into the server, and with them a call of reflect.Type.Method,
// which stops the linker from dropping any unused exported method of any type
// (docs/development.md, What the server links, says how much). The
// template ent/template/runtime.tmpl instead assigns the functions by name,
// and takes the names from the Annotation the helpers here record beside the
// function they set, at the moment they set it: the name is the function's
// own (runtime.FuncForPC), so it cannot disagree with what ent would have
// called. ent/entc_runtime.go refuses to generate when a field has a default
// function or a validator the annotation does not name, so a plain
// .Validate(fn), .NotEmpty() or DefaultFunc(fn) fails `go generate` rather
// than being silently dropped.
//
// For the same reason the runtime must not call a schema's Mixin(): the
// []ent.Mixin it returns makes the interface type ent.Mixin reachable, and
// with it (through the method Fields() []ent.Field) the field builders. A
// mixin with hooks, interceptors or a policy records its type with Mixin in
// its Annotations, and the runtime takes them from a fresh T{} of that type.
//
// The functions must be top-level, exported functions (no closures, methods
// or generic instances): the generated code refers to them by name.
package named

import (
	"errors"
	"fmt"
	"go/token"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/schema"
)

// NotEmpty is ent's NotEmpty validator of strings (MinLen(1)) as a named
// function, with the same error text.
func NotEmpty(v string) error {
	if len(v) < 1 {
		return errors.New("value is less than the required length")
	}
	return nil
}

// Annotation names the Go functions set on a field, each as import path, a
// dot and the function's name ("github.com/acme/itemsvc/ent/schema.Now").
// Record it only with the helpers of this package, which set the function
// and its name together.
type Annotation struct {
	Default       string   `json:"default,omitempty"`
	UpdateDefault string   `json:"update_default,omitempty"`
	Validators    []string `json:"validators,omitempty"` // in the order ent calls them
}

// Name implements schema.Annotation.
func (Annotation) Name() string { return "NamedFunc" }

// Merge implements schema.Merger: each helper adds its own annotation to the
// field, and ent keeps only the first of a name unless they merge.
func (a Annotation) Merge(other schema.Annotation) schema.Annotation {
	var o Annotation
	switch other := other.(type) {
	case Annotation:
		o = other
	case *Annotation:
		o = *other
	default:
		return a
	}
	if o.Default != "" {
		a.Default = o.Default
	}
	if o.UpdateDefault != "" {
		a.UpdateDefault = o.UpdateDefault
	}
	a.Validators = append(slices.Clip(a.Validators), o.Validators...)
	return a
}

// annotated is a field builder that takes annotations.
type annotated[B any] interface {
	Annotations(...schema.Annotation) B
}

// Validate adds fns to the validators of the field b builds, like b's own
// Validate, and records their names.
func Validate[B interface {
	annotated[B]
	Validate(func(T) error) B
}, T any](b B, fns ...func(T) error) B {
	names := make([]string, len(fns))
	for i, fn := range fns {
		b = b.Validate(fn)
		names[i] = funcName(fn)
	}
	return b.Annotations(Annotation{Validators: names})
}

// Default sets fn as the creation default of the field b builds, for
// builders whose Default takes a function (time fields), and records its name.
func Default[B interface {
	annotated[B]
	Default(any) B
}, T any](b B, fn func() T) B {
	return b.Default(fn).Annotations(Annotation{Default: funcName(fn)})
}

// DefaultFunc sets fn as the creation default of the field b builds, for
// builders with a DefaultFunc (strings, numbers), and records its name.
func DefaultFunc[B interface {
	annotated[B]
	DefaultFunc(any) B
}, T any](b B, fn func() T) B {
	return b.DefaultFunc(fn).Annotations(Annotation{Default: funcName(fn)})
}

// UpdateDefault sets fn as the update default of the field b builds and
// records its name.
func UpdateDefault[B interface {
	annotated[B]
	UpdateDefault(any) B
}, T any](b B, fn func() T) B {
	return b.UpdateDefault(fn).Annotations(Annotation{UpdateDefault: funcName(fn)})
}

// funcName is the import path and name of fn. It panics (failing the
// schema load, and so `go generate`) unless fn is a top-level exported
// function, the only kind generated code can name.
func funcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		panic(fmt.Sprintf("named: %T is not a function", fn))
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		panic("named: cannot name a function")
	}
	full := f.Name()
	if _, _, err := Split(full); err != nil {
		panic("named: " + err.Error())
	}
	return full
}

// Split splits a name recorded in an Annotation into import path and
// function name, and checks that generated code can refer to it.
func Split(full string) (path, name string, err error) {
	slash := strings.LastIndexByte(full, '/')
	dot := strings.IndexByte(full[slash+1:], '.')
	if dot < 0 {
		return "", "", fmt.Errorf("%q is not a qualified function name", full)
	}
	path, name = full[:slash+1+dot], full[slash+1+dot+1:]
	if !token.IsIdentifier(name) || !token.IsExported(name) {
		return "", "", fmt.Errorf("%s is not a top-level exported function (closures, methods and generic functions cannot be named by generated code)", full)
	}
	return path, name, nil
}

// Mixins lists, in the order of the schema's Mixin(), the mixins that
// recorded themselves with Mixin. ent merges the annotations of a schema's
// mixins into the schema's, so the list is the schema's.
type Mixins struct {
	List []MixinType `json:"list"`
}

// MixinType is a mixin's type and what run-time code it has, which the
// generator matches against the positions ent reports for the mixin's
// hooks, interceptors and policy.
type MixinType struct {
	Type         string `json:"type"` // import path, a dot, the type's name
	Hooks        int    `json:"hooks,omitempty"`
	Interceptors int    `json:"interceptors,omitempty"`
	Policy       bool   `json:"policy,omitempty"`
}

// Name implements schema.Annotation.
func (Mixins) Name() string { return "NamedMixins" }

// Merge implements schema.Merger, keeping the mixins in order.
func (m Mixins) Merge(other schema.Annotation) schema.Annotation {
	switch other := other.(type) {
	case Mixins:
		m.List = append(slices.Clip(m.List), other.List...)
	case *Mixins:
		m.List = append(slices.Clip(m.List), other.List...)
	}
	return m
}

// Mixin records m for its Annotations method. It panics (failing
// `go generate`) unless m is the zero value of an exported, named struct type,
// the value generated code rebuilds as T{}.
func Mixin(m ent.Mixin) Mixins {
	t := reflect.TypeOf(m)
	if t.Kind() != reflect.Struct || t.Name() == "" || !token.IsExported(t.Name()) || t.PkgPath() == "" {
		panic(fmt.Sprintf("named: mixin %v is not an exported named struct type", t))
	}
	if !reflect.ValueOf(m).IsZero() {
		panic(fmt.Sprintf("named: mixin %v has fields set; generated code can only rebuild its zero value", t))
	}
	return Mixins{List: []MixinType{{
		Type:         t.PkgPath() + "." + t.Name(),
		Hooks:        len(m.Hooks()),
		Interceptors: len(m.Interceptors()),
		Policy:       m.Policy() != nil,
	}}}
}
