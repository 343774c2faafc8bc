// Package serial holds the fast paths the generator (graph/gqlgen.go) points
// gqlgen's generated executor at, each with the same output and error
// behaviour as the gqlgen code it replaces.
//
// They rest on one fact of this server: by the time a field is marshalled,
// its data is loaded (ent's field collection eager-loads the edges a query
// selects). gqlgen's general machinery (a goroutine per list element and per
// edge field, a context, closures and a boxed value per field, a FieldSet
// with a map per object) only costs then, on every field of a page.
// MarshalSlice marshals lists element by element on the calling goroutine;
// Value and Field resolve fields read straight from their object; Object
// and Fields write an object's fields; Buffer pools the buffers responses
// are written into. What each buys, against gqlgen's own executor, is
// measured in docs/ablation.md, which also lists what was left out for
// buying too little.
package serial

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// MarshalSlice has the signature and the error behaviour of
// graphql.MarshalSliceConcurrently (each element sees its index in its field
// context; a panic becomes an error on that element and nulls the list), but
// marshals the elements in turn. workerLimit is unused: there are no workers.
// A null element is written as null (the generated marshaller of a list of
// non-null elements then answers null for the list, as with gqlgen's).
func MarshalSlice(
	ctx context.Context,
	length int,
	workerLimit int64,
	omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	ret := make(graphql.Array, length)
	// One allocation for the elements' field contexts, indexes and
	// contexts: graphql.WithFieldContext would make a context per element.
	elems := make([]element, length)
	parent := graphql.GetFieldContext(ctx)
	l := &list{Context: ctx, n: length}
	failed := false
	for i := range length {
		e := &elems[i]
		e.index = i
		e.fc.Index = &e.index
		childCtx := withElementContext(l, parent, e)
		if !guard(childCtx, omitPanicHandler, func() { ret[i] = marshalElement(childCtx, i) }) {
			failed = true
		}
	}
	if failed {
		return nil
	}
	return ret
}

// guard runs f, turning a panic into an error on ctx's field unless
// omitPanicHandler, and reports whether f returned.
func guard(ctx context.Context, omitPanicHandler bool, f func()) (ok bool) {
	if !omitPanicHandler {
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(ctx, graphql.Recover(ctx, r))
				ok = false
			}
		}()
	}
	f()
	return true
}

// element is what MarshalSlice makes for one element of a list.
type element struct {
	fc    graphql.FieldContext
	index int
	ctx   elementContext
}

// elementContext is graphql.WithFieldContext(Context, fc) made without an
// allocation of its own: it answers gqlgen's field context key with fc and
// every other key as its parent does. A list element's parent is its
// list, where Field finds the element's child field context.
type elementContext struct {
	context.Context
	fc *graphql.FieldContext
}

// list is the context of a list's elements (the list field's, which it
// embeds) and what they share: the field contexts of one object field of
// each element (an edge's node), made in one allocation when the first
// element's is asked for (Field). Being the elements' parent rather than a
// pointer in each keeps an element small.
type list struct {
	context.Context
	n        int
	children []child
}

// child is the field context and context of one object field of a list
// element, used (ctx set) by at most one field of the element: 160 bytes,
// a size class of the allocator for a page of 20.
type child struct {
	fc  graphql.FieldContext
	ctx elementContext
}

// freeChild returns the unused child of the list element whose own context
// ctx is, or nil.
func freeChild(ctx context.Context) *child {
	c, ok := ctx.(*elementContext)
	if !ok {
		return nil
	}
	l, ok := c.Context.(*list)
	if !ok || c.fc.Index == nil {
		return nil
	}
	if l.children == nil {
		l.children = make([]child, l.n)
	}
	ch := &l.children[*c.fc.Index]
	if ch.ctx.Context != nil {
		return nil
	}
	return ch
}

// Value implements context.Context.
func (c *elementContext) Value(key any) any {
	if key == fieldContextKey {
		return c.fc
	}
	return c.Context.Value(key)
}

// fieldContextKey is the key under which gqlgen keeps the field context
// (an unexported value of package graphql), learnt once by asking a
// context that records the key it is asked for.
var fieldContextKey = func() any {
	var r keyRecorder
	graphql.GetFieldContext(&r)
	return r.key
}()

// keyRecorder is a context that records the last key it was asked for.
type keyRecorder struct {
	context.Context
	key any
}

// Value implements context.Context.
func (r *keyRecorder) Value(key any) any {
	r.key = key
	return nil
}

// withElementContext returns graphql.WithFieldContext(ctx, &e.fc), in e
// when gqlgen's key is known (parent is the field context of ctx).
func withElementContext(ctx context.Context, parent *graphql.FieldContext, e *element) context.Context {
	if fieldContextKey == nil {
		return graphql.WithFieldContext(ctx, &e.fc)
	}
	e.fc.Parent = parent
	e.ctx = elementContext{Context: ctx, fc: &e.fc}
	return &e.ctx
}

// Value marshals a scalar field read straight from its object (the
// generated resolver is `return obj.Field, nil`, with no directive): the
// value cannot fail, so the field context, the panic guard and the field
// middleware gqlgen wraps around every field would only cost. The
// generator (graph/gqlgen.go) points such fields here. A field middleware
// would not see these fields: the server refuses to start with one on the
// rewritten executor (graph/server.New; docs/development.md).
func Value[T any](ctx context.Context, field graphql.CollectedField, v T,
	marshal func(ctx context.Context, sel ast.SelectionSet, v T) graphql.Marshaler,
) graphql.Marshaler {
	return marshal(ctx, field.Selections, v)
}

// Object marshals an object's resolved fields as gqlgen's FieldSet does
// (`{"alias":value,…}` in selection order), for the generated object
// marshallers (graph/gqlgen.go points them here). The FieldSet builds a
// map of the aliases it wrote, to skip repeats, and copies every collected
// field onto the heap on the way; graphql.CollectFields already merged the
// fields of one alias into one, so there are no repeats to skip. An alias is
// a GraphQL name ([_A-Za-z][_0-9A-Za-z]*): it needs no escaping.
func Object(fields []graphql.CollectedField, values []graphql.Marshaler) graphql.Marshaler {
	return &object{fields: fields, values: values}
}

type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

// MarshalGQL implements graphql.Marshaler. The executor writes into a
// bytes.Buffer (Buffer), which is written to directly: through io.Writer,
// each of an object's pieces would cost io.WriteString's interface check.
func (o *object) MarshalGQL(w io.Writer) {
	if buf, ok := w.(*bytes.Buffer); ok {
		o.writeTo(buf)
		return
	}
	var buf bytes.Buffer
	o.writeTo(&buf)
	_, _ = w.Write(buf.Bytes())
}

func (o *object) writeTo(buf *bytes.Buffer) {
	buf.WriteByte('{')
	for i := range o.fields {
		if i > 0 {
			buf.WriteString(`,"`)
		} else {
			buf.WriteByte('"')
		}
		buf.WriteString(o.fields[i].Alias)
		buf.WriteString(`":`)
		if v := o.values[i]; v != nil {
			v.MarshalGQL(buf)
		} else {
			buf.WriteString("null")
		}
	}
	buf.WriteByte('}')
}

// Fields holds an object's resolved field values where every field resolves
// in the generated loop (none runs concurrently, none is deferred): the
// part of graphql.FieldSet such an object uses, without its allocation.
type Fields struct {
	Values   []graphql.Marshaler
	Invalids uint32
	obj      *object
}

// NewFields returns Fields for n fields of an object marshalled in ctx.
func NewFields(ctx context.Context, n int) Fields {
	o := &object{values: make([]graphql.Marshaler, n)}
	return Fields{Values: o.values, obj: o}
}

// Object is Object(fields, f.Values) in the allocation NewFields made.
func (f *Fields) Object(fields []graphql.CollectedField) graphql.Marshaler {
	f.obj.fields = fields
	return f.obj
}

// Dispatch has nothing to run: every value is already resolved.
func (*Fields) Dispatch(context.Context) {}

// buffers hold the data of responses between requests (Buffer, Release).
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled keeps a rare large response's buffer out of the pool.
const maxPooled = 64 << 10

// Buffer returns an empty buffer from the pool: the generated executor
// writes a response's data into one (graph/gqlgen.go points it here), the
// POST transport the whole response. Give what it ends up holding back
// with Release once nothing reads it, or let the garbage collector have it.
func Buffer() *bytes.Buffer {
	return buffers.Get().(*bytes.Buffer)
}

// Release returns the buffer that data was written into by the executor,
// once nothing reads data any more. data that did not come from Buffer
// (a response the server rewrote) is only a little garbage here.
func Release(data []byte) {
	if cap(data) > 0 {
		releaseBuffer(bytes.NewBuffer(data))
	}
}

// releaseBuffer empties buf and returns it to the pool, unless it grew
// past maxPooled.
func releaseBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooled {
		return
	}
	buf.Reset()
	buffers.Put(buf)
}

// Field resolves an object-valued field read straight from its object (the
// generated resolver is `return obj.Field, nil`, with no directive) as
// graphql.ResolveField does: the field's context for its children, a
// panic turned into an error, but without the resolver, middleware and
// result closures gqlgen allocates around a value that is already there.
// A nil object reaches marshal, which reports a non-null field as null, as
// it does through gqlgen. As for Value, a field middleware would skip these
// fields, which is why the server refuses one on the rewritten executor.
//
// On a list element (an edge of a page), the field's context is the
// element's child in the list's one allocation (MarshalSlice): gqlgen would
// make a context for each element.
func Field[T any](ctx context.Context, oc *graphql.OperationContext, field graphql.CollectedField,
	fieldContext func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error),
	v T, marshal func(ctx context.Context, sel ast.SelectionSet, v T) graphql.Marshaler, recoverFromPanic bool,
) (ret graphql.Marshaler) {
	if ch := freeChild(ctx); ch != nil {
		fc, err := fieldContext(ctx, field)
		if err != nil {
			return graphql.Null
		}
		ch.fc = *fc
		ch.fc.Parent = ctx.(*elementContext).fc
		ch.ctx = elementContext{Context: ctx, fc: &ch.fc}
		ctx = &ch.ctx
		return resolved(ctx, oc, field, &ch.fc, v, marshal, recoverFromPanic)
	}
	fc, err := fieldContext(ctx, field)
	if err != nil {
		return graphql.Null
	}
	ctx = graphql.WithFieldContext(ctx, fc)
	return resolved(ctx, oc, field, fc, v, marshal, recoverFromPanic)
}

// resolved is the rest of Field once ctx holds the field's context fc.
func resolved[T any](ctx context.Context, oc *graphql.OperationContext, field graphql.CollectedField, fc *graphql.FieldContext,
	v T, marshal func(ctx context.Context, sel ast.SelectionSet, v T) graphql.Marshaler, recoverFromPanic bool,
) (ret graphql.Marshaler) {
	if recoverFromPanic {
		defer func() {
			if r := recover(); r != nil {
				oc.Error(ctx, oc.Recover(ctx, r))
				ret = graphql.Null
			}
		}()
	}
	fc.Result = v
	return marshal(ctx, field.Selections, v)
}
