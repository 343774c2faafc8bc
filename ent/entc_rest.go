//go:build ignore

package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"slices"
	"strings"
	"text/template"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc/gen"

	"github.com/acme/itemsvc/ent/schema/api/shape"
)

// Every type annotated entgql.Mutations is a resource clients write: GraphQL
// takes its Create<Type>Input and Update<Type>Input (entgql's, in package
// ent), and so does REST, whose decoding of them this file generates with
// the resource's JSON shape, from the same rules (package shape).

// Files this command writes beside ent's, relative to ent/.
const (
	resourceFile = "../internal/resource/resources.generated.go"
	restFile     = "../rest/inputs.generated.go"
)

// restShapes is the gen.Hook of those resources: before ent and entgql
// generate, it keeps out of the mutation inputs every field and edge a
// client may not set; after, it writes their REST shapes and decoders.
func restShapes(next gen.Generator) gen.Generator {
	return gen.GenerateFunc(func(g *gen.Graph) error {
		rs, err := writable(g)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := skipUnsettable(r.Type); err != nil {
				return fmt.Errorf("%s: %w", r.Type.Name, err)
			}
		}
		if err := next.Generate(g); err != nil {
			return err
		}
		for _, r := range rs {
			if err := r.describe(); err != nil {
				return fmt.Errorf("%s: %w", r.Type.Name, err)
			}
		}
		shapes, err := plainShapes(g, rs)
		if err != nil {
			return err
		}
		if err := render(resourceFile, resourceTemplate, shapes); err != nil {
			return err
		}
		return render(restFile, restTemplate, rs)
	})
}

// writable are the types annotated entgql.Mutations, in the graph's order.
func writable(g *gen.Graph) ([]*resource, error) {
	var rs []*resource
	for _, t := range g.Nodes {
		ok, err := shape.Writable(t)
		if err != nil {
			return nil, err
		}
		if ok {
			rs = append(rs, &resource{Type: t})
		}
	}
	return rs, nil
}

// plainShapes are the resources whose JSON shape is their fields as ent
// holds them (package shape's), which resourceTemplate renders: the
// writable ones and every other api.Resource that shows no edge, renames
// no field and has no field of a schema of its own or shown once (those
// are kept by hand in internal/resource). In the graph's order.
func plainShapes(g *gen.Graph, writable []*resource) ([]*resource, error) {
	var out []*resource
	for _, t := range g.Nodes {
		if i := slices.IndexFunc(writable, func(r *resource) bool { return r.Type == t }); i >= 0 {
			out = append(out, writable[i])
			continue
		}
		a, err := shape.Type(t)
		if err != nil {
			return nil, err
		}
		if a.Resource == "" {
			continue
		}
		fields, err := shape.Fields(t)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(fields, func(f shape.Field) bool {
			return f.Edge != nil || f.Name != f.Ent.Name || f.API.Once || f.API.Schema != "" || f.API.Ref != "" || f.API.Nullable
		}) {
			continue
		}
		out = append(out, &resource{Type: t, Fields: slices.DeleteFunc(fields, func(f shape.Field) bool { return f.ID })})
	}
	return out, nil
}

// skipUnsettable keeps out of each mutation input the fields a client may
// not set in it (shape.Field's Creatable, Updatable), and every immutable
// edge.
func skipUnsettable(t *gen.Type) error {
	fields, err := shape.Fields(t)
	if err != nil {
		return err
	}
	shown := map[*gen.Field]shape.Field{}
	for _, f := range fields {
		if f.Ent != nil {
			shown[f.Ent] = f
		}
	}
	for _, f := range t.Fields {
		var mode entgql.SkipMode
		sf, ok := shown[f]
		if !ok || !sf.Creatable() {
			mode |= entgql.SkipMutationCreateInput
		}
		if !ok || !sf.Updatable() {
			mode |= entgql.SkipMutationUpdateInput
		}
		if mode != 0 {
			if err := addSkip(f.Annotations, mode); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	for _, e := range t.Edges {
		if e.Immutable {
			if e.Annotations == nil {
				e.Annotations = gen.Annotations{}
			}
			if err := addSkip(e.Annotations, entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput); err != nil {
				return fmt.Errorf("edge %s: %w", e.Name, err)
			}
		}
	}
	return nil
}

func addSkip(as gen.Annotations, mode entgql.SkipMode) error {
	var a entgql.Annotation
	if err := shape.Decode(as, a.Name(), &a); err != nil {
		return err
	}
	a.Skip |= mode
	as[a.Name()] = a
	return nil
}

// resource is a writable type as the templates read it.
type resource struct {
	*gen.Type
	// Fields are those clients see, after the id, each with the name of
	// its Go field in the shape.
	Fields []shape.Field
	// Create and Update are the fields of its mutation inputs.
	Create, Update []*entgql.InputFieldDescriptor
	// Creatable and Updatable name the fields a create body and an update
	// body set; Fixed and Kept the read-only ones an update may carry
	// back: unchanged, and any value (the server's to move).
	Creatable, Updatable, Fixed, Kept []string
}

func (r *resource) describe() error {
	var err error
	if r.Fields, err = shape.Fields(r.Type); err != nil {
		return err
	}
	if r.Create, err = (&entgql.MutationDescriptor{Type: r.Type, IsCreate: true}).InputFields(); err != nil {
		return err
	}
	if r.Update, err = (&entgql.MutationDescriptor{Type: r.Type}).InputFields(); err != nil {
		return err
	}
	for _, f := range r.Fields {
		if f.Edge != nil || f.Name != f.Ent.Name {
			return fmt.Errorf("field %s: entc_rest.go shows no edges or renamed fields yet", f.Name)
		}
		if f.Creatable() {
			r.Creatable = append(r.Creatable, f.Name)
		}
		switch {
		case f.Updatable():
			r.Updatable = append(r.Updatable, f.Name)
		case f.Kept():
			r.Kept = append(r.Kept, f.Name)
		default:
			r.Fixed = append(r.Fixed, f.Name)
		}
	}
	for _, in := range []struct {
		fields []*entgql.InputFieldDescriptor
		names  []string
	}{{r.Create, r.Creatable}, {r.Update, r.Updatable}} {
		for _, f := range in.fields {
			if !slices.Contains(in.names, f.Name) {
				return fmt.Errorf("field %s is in a mutation input but clients may not set it there (package shape)", f.Name)
			}
		}
	}
	// The id leads every shape on its own.
	r.Fields = slices.DeleteFunc(r.Fields, func(f shape.Field) bool { return f.ID })
	return nil
}

// render executes the template on the resources and writes the formatted
// source to path.
func render(path, text string, rs []*resource) error {
	t, err := template.New(path).Funcs(template.FuncMap{
		"quote":    func(ss []string) string { return fmt.Sprintf("%#v", ss) },
		"goType":   goType,
		"value":    value,
		"required": func(f *entgql.InputFieldDescriptor) bool { return !f.Nullable },
		"lower":    strings.ToLower,
		"usesTime": func(rs []*resource) bool {
			for _, r := range rs {
				for _, f := range r.Fields {
					if f.Ent.IsTime() {
						return true
					}
				}
			}
			return false
		},
	}).Parse(text)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, rs); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", path, err, b.Bytes())
	}
	return os.WriteFile(path, src, 0o644)
}

// goType is the Go type of a field in a resource's JSON shape: an enum is
// its string (REST shows ent's values), a nillable field a pointer.
func goType(f *gen.Field) string {
	t := f.Type.String()
	if f.IsEnum() {
		t = "string"
	}
	if f.Nillable {
		t = "*" + t
	}
	return t
}

// value is the expression of a field of ent's struct (named v) in the
// resource's JSON shape: timestamps in UTC, enums as strings.
func value(f *gen.Field) string {
	v := "v." + f.StructField()
	switch {
	case f.Nillable && f.IsTime():
		return fmt.Sprintf("func() *time.Time { if %s == nil { return nil }; t := %s.UTC(); return &t }()", v, v)
	case f.Nillable && f.IsEnum():
		return fmt.Sprintf("func() *string { if %s == nil { return nil }; s := string(*%s); return &s }()", v, v)
	case f.IsTime():
		return v + ".UTC()"
	case f.IsEnum():
		return "string(" + v + ")"
	}
	return v
}

const header = "// Code generated by ent/entc.go from ent/schema (entc_rest.go); DO NOT EDIT.\n\n"

const resourceTemplate = header + `package resource

import (
	{{- if usesTime . }}
	"time"
	{{ end }}
	"github.com/acme/itemsvc/ent"
)

{{ range . }}
// {{ .Name }} is the {{ .Name }} resource as clients see it: REST's data and
// every payload that carries one (an item's events and webhooks).
type {{ .Name }} struct {
	ID {{ .ID.Type }} ` + "`json:\"id\"`" + `
	{{- range .Fields }}
	{{ .Ent.StructField }} {{ goType .Ent }} ` + "`json:\"{{ .Name }}\"`" + `
	{{- end }}
}

// New{{ .Name }} renders an ent {{ lower .Name }}.
func New{{ .Name }}(v *ent.{{ .Name }}) {{ .Name }} {
	return {{ .Name }}{
		ID: v.ID,
		{{- range .Fields }}
		{{ .Ent.StructField }}: {{ value .Ent }},
		{{- end }}
	}
}

// New{{ .Name }}s renders a page of ent {{ lower .Name }}s.
func New{{ .Name }}s(vs []*ent.{{ .Name }}) []{{ .Name }} {
	out := make([]{{ .Name }}, len(vs))
	for i, v := range vs {
		out[i] = New{{ .Name }}(v)
	}
	return out
}
{{ end }}
`

const restTemplate = header + `package rest

import (
	"github.com/acme/itemsvc/ent"
)

{{ range . }}
{{- $r := . }}
// {{ lower .Name }}Body names the fields of {{ .Name }}'s request bodies: those a client
// sets, and those of its JSON that an update may carry back (decode.go).
var {{ lower .Name }}Body = body{
	create:   {{ quote .Creatable }},
	update:   {{ quote .Updatable }},
	readOnly: readOnly{fixed: {{ quote .Fixed }}, kept: {{ quote .Kept }}, reason: sendBack},
}

// decodeCreate{{ .Name }}Input decodes the settable fields of {{ .Name }}'s create body.
func decodeCreate{{ .Name }}Input(o object) (ent.Create{{ .Name }}Input, error) {
	var in ent.Create{{ .Name }}Input
	{{- range .Create }}
	{{- if required . }}
	if err := decodeRequired(o, "{{ .Name }}", &in.{{ .StructField }}); err != nil {
	{{- else }}
	if err := decodeOptional(o, "{{ .Name }}", &in.{{ .StructField }}, nil); err != nil {
	{{- end }}
		return in, err
	}
	{{- end }}
	return in, nil
}

// decodeUpdate{{ .Name }}Input decodes the settable fields of {{ .Name }}'s update body.
func decodeUpdate{{ .Name }}Input(o object) (ent.Update{{ .Name }}Input, error) {
	var in ent.Update{{ .Name }}Input
	{{- range .Update }}
	{{- if .ClearOp }}
	if err := decodeOptional(o, "{{ .Name }}", &in.{{ .StructField }}, &in.Clear{{ .StructField }}); err != nil {
	{{- else }}
	if err := decodeOptional(o, "{{ .Name }}", &in.{{ .StructField }}, nil); err != nil {
	{{- end }}
		return in, err
	}
	{{- end }}
	return in, nil
}
{{ end }}
`
