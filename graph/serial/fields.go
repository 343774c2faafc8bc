package serial

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// fieldsKey names one selection set as one type collects it: the set by
// its first selection and length, the type by its implementors slice (a
// package variable of the generated code, so its address is stable).
type fieldsKey struct {
	sel       ast.Selection
	n         int
	satisfies *string
}

// fieldsCache holds an operation's collected fields. gqlgen caches them
// too, but builds its key with an FNV hasher on the heap on every call:
// once per object, 20 times for a page of items.
type fieldsCache struct {
	mu sync.Mutex
	m  map[fieldsKey][]graphql.CollectedField
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
	k := fieldsKey{sel: sel[0], n: len(sel), satisfies: &satisfies[0]}
	c.mu.Lock()
	fields, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return fields
	}
	fields = graphql.CollectFields(opCtx, sel, satisfies)
	c.mu.Lock()
	c.m[k] = fields
	c.mu.Unlock()
	return fields
}

// FieldsCache is the handler extension that gives each operation the cache
// CollectFields reads (server: srv.Use(serial.FieldsCache{})).
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
	opCtx.Stats.SetExtension(fieldsStatsKey, &fieldsCache{m: make(map[fieldsKey][]graphql.CollectedField, 8)})
	return nil
}
