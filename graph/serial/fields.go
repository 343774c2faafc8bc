package serial

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// fieldsKey names one selection set as one type collects it: the set by
// its array and length, as gqlgen's own cache does, the type by its
// implementors slice (a package variable of the generated code, so its
// address is stable). Not by its first selection: where a fragment is
// merged with other fields, the field's selections are a new array that
// starts with the fragment's, and another place of the same operation can
// merge it with other fields into a set as long. The key holds the array,
// which then cannot be reused for another set while the entry lives.
type fieldsKey struct {
	sel       *ast.Selection
	n         int
	satisfies *string
}

// fieldsEntry is one selection set's collected fields.
type fieldsEntry struct {
	key    fieldsKey
	fields []graphql.CollectedField
}

// fieldsCache holds an operation's collected fields. gqlgen caches them
// too, but builds its key with an FNV hasher on the heap on every call:
// once per object, 41 times for a page of 20 items. An operation collects
// a handful of distinct sets, read far more often than added (every item
// of a page reads the same one): readers scan the published entries
// without a lock; a writer fills the next entry, then publishes it. Sets
// beyond the first len(entries) are left to gqlgen's cache.
type fieldsCache struct {
	n       atomic.Int32 // entries[:n] are published and never change
	mu      sync.Mutex   // serializes writers
	entries [8]fieldsEntry
}

const fieldsStatsKey = "serial.collectedFields"

// CollectFields returns graphql.CollectFields(opCtx, sel, satisfies),
// from the operation's cache once computed (graph/gqlgen.go points the
// generated code here). Without the cache that FieldsCache installs it is
// graphql.CollectFields.
func CollectFields(opCtx *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	c, _ := opCtx.Stats.GetExtension(fieldsStatsKey).(*fieldsCache)
	if c == nil || len(sel) == 0 || len(satisfies) == 0 {
		return graphql.CollectFields(opCtx, sel, satisfies)
	}
	k := fieldsKey{sel: unsafe.SliceData(sel), n: len(sel), satisfies: &satisfies[0]}
	if fields, ok := c.get(k, int(c.n.Load())); ok {
		return fields
	}
	fields := graphql.CollectFields(opCtx, sel, satisfies)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int(c.n.Load())
	if cached, ok := c.get(k, n); ok {
		return cached // collected meanwhile by another resolver
	}
	if n < len(c.entries) {
		c.entries[n] = fieldsEntry{key: k, fields: fields}
		c.n.Store(int32(n + 1))
	}
	return fields
}

// get returns the fields cached under k among the first n entries.
func (c *fieldsCache) get(k fieldsKey, n int) ([]graphql.CollectedField, bool) {
	for i := range c.entries[:n] {
		if e := &c.entries[i]; e.key == k {
			return e.fields, true
		}
	}
	return nil, false
}

// FieldsCache is the handler extension that gives each operation the cache
// CollectFields reads (graph/server/server.go: srv.Use(serial.FieldsCache{})).
// The cache lives as long as its operation: the fields collected depend on
// the request's variables (@skip, @include, @defer).
type FieldsCache struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = FieldsCache{}

// ExtensionName implements graphql.HandlerExtension.
func (FieldsCache) ExtensionName() string { return "CollectedFieldsCache" }

// Validate implements graphql.HandlerExtension.
func (FieldsCache) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator: the
// cache is installed before the operation runs, while nothing reads the
// operation's extensions concurrently.
func (FieldsCache) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	opCtx.Stats.SetExtension(fieldsStatsKey, &fieldsCache{})
	return nil
}
