// Package serial holds the fast paths the generator (graph/gqlgen.go) points
// gqlgen's generated executor at, each with the same output and error
// behaviour as the gqlgen code it replaces.
//
// They rest on one fact of this server: by the time a field is marshalled,
// its data is loaded (ent's field collection eager-loads the edges a query
// selects). gqlgen's general machinery (a goroutine per list element and per
// edge field, a context, closures and a boxed value per field, a FieldSet
// with a map per object) only costs then; for a page of 20 items it made
// GraphQL about half as fast as the same REST list. MarshalSlice marshals
// lists element by element on the calling goroutine and, for an operation
// without directives, writes each element as soon as it is resolved,
// reusing what it was made of for the next; Value, Field, String and Time
// resolve fields read straight from their object; Object and Fields write
// an object's fields; CollectFields caches per operation (shared by every
// request of one without directives), Memo per parsed operation, and
// Buffer per response.
package serial

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// MarshalSlice has the signature and the error behaviour of
// graphql.MarshalSliceConcurrently (each element sees its index in its field
// context; a panic becomes an error on that element and nulls the list), but
// marshals the elements in turn. workerLimit is unused: there are no workers.
// The generator points the lists of nullable elements here; a null element
// is written as null.
func MarshalSlice(
	ctx context.Context,
	length int,
	workerLimit int64,
	omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	return marshalSlice(ctx, length, omitPanicHandler, false, marshalElement)
}

// MarshalNonNullSlice is MarshalSlice for a list of non-null elements,
// whose generated marshaller answers null for the whole list when an
// element is null (graphql.Null among the elements returned).
func MarshalNonNullSlice(
	ctx context.Context,
	length int,
	workerLimit int64,
	omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	return marshalSlice(ctx, length, omitPanicHandler, true, marshalElement)
}

func marshalSlice(ctx context.Context, length int, omitPanicHandler, nonNull bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	if length > 0 && rendering(ctx) {
		return render(ctx, length, omitPanicHandler, nonNull, marshalElement)
	}
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

// render is marshalSlice for an operation without @defer (rendering):
// each element is resolved and at once written into one pooled buffer
// (rendered), after which nothing refers to what was made for it, so that
// the next element reuses it: the objects of its fields (NewFields) and,
// unless something used them (list.used), its field context and context
// and its child's (Field). A page of twenty items whose fields are read
// from the loaded page makes one of each rather than twenty, and no array
// of their values. What is written is what graphql.Array would write for
// the same elements, and every element is resolved whatever happens to the
// others, as before, so that each reports its own errors.
func render(ctx context.Context, length int, omitPanicHandler, nonNull bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	parent := graphql.GetFieldContext(ctx)
	l := &list{Context: ctx, n: 1, render: true}
	buf := Buffer()
	failed, null := false, false
	for i := range length {
		l.arena.reset()
		if l.elem == nil || l.used.Load() || noReuse {
			// The last element's contexts may be held by what used them.
			l.elem, l.children = new(element), make([]child, 1)
			l.used.Store(false)
		} else {
			*l.elem = element{}
			l.children[0] = child{}
		}
		e := l.elem
		e.index = i
		e.fc.Index = &e.index
		childCtx := withElementContext(l, parent, e)
		if !guard(childCtx, omitPanicHandler, func() {
			m := marshalElement(childCtx, i)
			if m == graphql.Null && nonNull {
				null = true
			}
			if failed || null {
				return // resolved for its errors; the list is null
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			m.MarshalGQL(buf)
		}) {
			failed = true
		}
	}
	if failed || null {
		releaseBuffer(buf)
		if failed {
			return nil
		}
		return graphql.Array{graphql.Null}
	}
	return graphql.Array{&rendered{buf: buf}}
}

// rendering reports whether the lists of ctx's operation may be rendered
// as they are resolved: the operation has no directive (its collected
// fields are shared, FieldsCache), so none of its fields is deferred, and
// nothing resolved for an element is used once the element is written.
func rendering(ctx context.Context) bool {
	if noRender {
		return false
	}
	if renderedList(ctx) != nil {
		return true // a list within an element of a rendered list
	}
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	c, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(fieldsStatsKey).(*fieldsCache)
	return c != nil && c.shared
}

// rendered is the elements of a list, written by render with the commas
// between them: graphql.Array{rendered} writes the list. Written once, it
// gives its buffer back to the pool.
type rendered struct{ buf *bytes.Buffer }

// MarshalGQL implements graphql.Marshaler.
func (r *rendered) MarshalGQL(w io.Writer) {
	if r.buf == nil {
		// The buffer may hold another response by now.
		panic("serial: a rendered list written twice")
	}
	_, _ = w.Write(r.buf.Bytes())
	releaseBuffer(r.buf)
	r.buf = nil
}

// arena holds the objects NewFields made for the element being rendered,
// in the order it made them, for the next element to reuse: the elements
// of a list ask for the same objects in the same order, unless some field
// of one is null where the others' is not, which costs a new object.
type arena struct {
	objects []*object
	next    int
}

// take returns an object for n values (n < len(sizedObjects)).
func (a *arena) take(n int) *object {
	if a.next == len(a.objects) {
		a.objects = append(a.objects, nil)
	}
	o := a.objects[a.next]
	if o == nil || len(o.values) != n {
		o = sizedObjects[n]()
		a.objects[a.next] = o
	}
	a.next++
	return o
}

// reset makes every object taken free again.
func (a *arena) reset() { a.next = 0 }

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
//
// In a rendered list, where the next element reuses it, it also reports
// any other use (used): a resolver's context reaches the database, whose
// driver may watch it from a goroutine of its own after the element is
// written. Asking for the field context is not a use: that is how gqlgen
// finds the field and its path.
type elementContext struct {
	context.Context
	fc *graphql.FieldContext
	l  *list // in a rendered list
}

// list is the context of a list's elements (the list field's, which it
// embeds) and what they share: the field contexts of one object field of
// each element (an edge's node), made in one allocation when the first
// element's is asked for (Field), and the first of them, which the others
// copy rather than each calling the generated fieldContext function (a
// FieldContext and its Child closure apiece). Being the elements' parent
// rather than a pointer in each keeps an element at 168 bytes.
type list struct {
	context.Context
	n        int
	children []child
	template *graphql.FieldContext
	first    graphql.FieldContext // what template points to

	// render: the list is rendered (render); elem is the element being
	// rendered, children its one child, arena the objects made for them.
	// used: something other than this package has used the context of
	// elem or of its child, and may still hold it.
	render bool
	elem   *element
	arena  arena
	used   atomic.Bool
}

// child is the field context and context of one object field of a list
// element, used (ctx set) by at most one field of the element: 160 bytes,
// a size class of the allocator for a page of 20.
type child struct {
	fc  graphql.FieldContext
	ctx elementContext
}

// freeChild returns the unused child of the list element whose own context
// ctx is, and its list, or nil.
func freeChild(ctx context.Context) (*child, *list) {
	c, ok := ctx.(*elementContext)
	if !ok {
		return nil, nil
	}
	l, ok := c.Context.(*list)
	if !ok || c.fc.Index == nil {
		return nil, nil
	}
	if l.children == nil {
		l.children = make([]child, l.n)
	}
	i := *c.fc.Index
	if l.render {
		i = 0 // the element being rendered
	}
	ch := &l.children[i]
	if ch.ctx.Context != nil {
		return nil, nil
	}
	return ch, l
}

// fromTemplate fills ch.fc from the list's template and reports whether
// it could: the template is the same field of the same type, and the
// generated fieldContext function, which is the type's and field's, set
// no arguments (they would be the field's own).
func (l *list) fromTemplate(ch *child, object string, field graphql.CollectedField) bool {
	t := l.template
	if noTemplate || t == nil || t.Object != object || t.Field.Field != field.Field || t.Args != nil {
		return false
	}
	ch.fc = graphql.FieldContext{
		Object:     t.Object,
		Field:      field,
		IsMethod:   t.IsMethod,
		IsResolver: t.IsResolver,
		Child:      t.Child,
	}
	return true
}

// Value implements context.Context.
func (c *elementContext) Value(key any) any {
	if key == fieldContextKey {
		return c.fc
	}
	c.use()
	return c.Context.Value(key)
}

// Done implements context.Context.
func (c *elementContext) Done() <-chan struct{} {
	c.use()
	return c.Context.Done()
}

// Err implements context.Context.
func (c *elementContext) Err() error {
	c.use()
	return c.Context.Err()
}

// Deadline implements context.Context.
func (c *elementContext) Deadline() (time.Time, bool) {
	c.use()
	return c.Context.Deadline()
}

// use records that c was used, for a rendered list not to reuse it.
func (c *elementContext) use() {
	if c.l != nil && !c.l.used.Load() {
		c.l.used.Store(true)
	}
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
	if l, ok := ctx.(*list); ok && l.render {
		e.ctx.l = l
	}
	return &e.ctx
}

// Value marshals a scalar field read straight from its object (the
// generated resolver is `return obj.Field, nil`, with no directive): the
// value cannot fail, so the field context, the panic guard and the field
// middleware gqlgen wraps around every field would only cost. The
// generator (graph/gqlgen.go) points such fields here. A field middleware
// would not see these fields: the server refuses to start with one on the
// rewritten executor (graph.NewServer; docs/development.md).
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
// The values and the object that writes them (Fields.Object) are one
// allocation, not two for each item and each edge of a page.
type Fields struct {
	Values   []graphql.Marshaler
	Invalids uint32
	obj      *object
}

// NewFields returns Fields for n fields of an object marshalled in ctx:
// within an element of a list being rendered (render), from the list's
// arena.
func NewFields(ctx context.Context, n int) Fields {
	var o *object
	if l := renderedList(ctx); l != nil && n < len(sizedObjects) && !noArena {
		o = l.arena.take(n)
	} else if n < len(sizedObjects) && !noSized {
		o = sizedObjects[n]()
	} else {
		o = &object{values: make([]graphql.Marshaler, n)}
	}
	return Fields{Values: o.values, obj: o}
}

// renderedList is the list being rendered whose element ctx is the
// context of, or of a field of, or nil.
func renderedList(ctx context.Context) *list {
	for {
		c, ok := ctx.(*elementContext)
		if !ok {
			return nil
		}
		if l, ok := c.Context.(*list); ok {
			if l.render {
				return l
			}
			return nil
		}
		ctx = c.Context
	}
}

// sizedObjects make an object with room for exactly i values in the same
// allocation, up to 16 fields (an item has 7, an edge 1 or 2): with a
// header of 48 bytes and 16 per value, each size is one of the
// allocator's size classes, so that the one allocation takes no more
// memory than the two it replaces.
var sizedObjects = [...]func() *object{
	func() *object { return &object{} },
	sizedObject[[1]graphql.Marshaler], sizedObject[[2]graphql.Marshaler],
	sizedObject[[3]graphql.Marshaler], sizedObject[[4]graphql.Marshaler],
	sizedObject[[5]graphql.Marshaler], sizedObject[[6]graphql.Marshaler],
	sizedObject[[7]graphql.Marshaler], sizedObject[[8]graphql.Marshaler],
	sizedObject[[9]graphql.Marshaler], sizedObject[[10]graphql.Marshaler],
	sizedObject[[11]graphql.Marshaler], sizedObject[[12]graphql.Marshaler],
	sizedObject[[13]graphql.Marshaler], sizedObject[[14]graphql.Marshaler],
	sizedObject[[15]graphql.Marshaler], sizedObject[[16]graphql.Marshaler],
}

// sizedObject makes an object whose values are the array A of
// graphql.Marshaler that follows it in the same allocation.
func sizedObject[A any]() *object {
	b := new(struct {
		object
		buf A
	})
	n := int(unsafe.Sizeof(b.buf) / unsafe.Sizeof(graphql.Marshaler(nil)))
	b.values = unsafe.Slice((*graphql.Marshaler)(unsafe.Pointer(&b.buf)), n)
	return &b.object
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
	if noPool {
		return new(bytes.Buffer)
	}
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
	if noPool {
		return
	}
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
// object is the type the field belongs to (the generated fieldContext
// function's FieldContext.Object). On a list element (an edge of a page),
// the field's context is the element's child in the list's one allocation
// (MarshalSlice) and, after the first element, a copy of the first's: the
// generated function would make a FieldContext, its Child closure and a
// context for each element.
func Field[T any](ctx context.Context, oc *graphql.OperationContext, field graphql.CollectedField, object string,
	fieldContext func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error),
	v T, marshal func(ctx context.Context, sel ast.SelectionSet, v T) graphql.Marshaler, recoverFromPanic bool,
) (ret graphql.Marshaler) {
	if ch, l := freeChild(ctx); ch != nil {
		if !l.fromTemplate(ch, object, field) {
			fc, err := fieldContext(ctx, field)
			if err != nil {
				return graphql.Null
			}
			ch.fc = *fc
			if l.template == nil {
				l.first = ch.fc
				l.template = &l.first
			}
		}
		ch.fc.Parent = ctx.(*elementContext).fc
		ch.ctx = elementContext{Context: ctx, fc: &ch.fc, l: ctx.(*elementContext).l}
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
