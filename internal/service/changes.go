package service

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/acme/itemsvc/ent"
)

// changed drops from an update of one row (a mutation built on the row as
// read, UpdateOne(row)) every field it sets to the value the row has, and
// returns what is left: each field's value before and after, a cleared
// field's after nil. No change at all is an empty map, and then nothing
// need be written. Read from the mutation, not from a list of fields, so a
// field added to a schema is compared and audited too.
func changed(ctx context.Context, m ent.Mutation) (map[string]Change, error) {
	out := map[string]Change{}
	for _, name := range m.Fields() {
		after, _ := m.Field(name)
		before, err := m.OldField(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("old %s: %w", name, err)
		}
		if same(before, after) {
			if err := m.ResetField(name); err != nil {
				return nil, err
			}
			continue
		}
		out[name] = Change{Before: before, After: after}
	}
	for _, name := range m.ClearedFields() {
		before, err := m.OldField(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("old %s: %w", name, err)
		}
		out[name] = Change{Before: before}
	}
	return out, nil
}

// same reports whether two values of a field are equal: timestamps as
// instants, anything else deeply.
func same(a, b ent.Value) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return reflect.DeepEqual(a, b)
}

// removed is a deleted resource's fields as they were, for its audit
// record: every field of its JSON but the id, which the record names.
func removed(resource any) map[string]Change {
	data, err := json.Marshal(resource)
	if err != nil {
		return nil
	}
	var fields map[string]any
	if json.Unmarshal(data, &fields) != nil {
		return nil
	}
	delete(fields, "id")
	out := make(map[string]Change, len(fields))
	for name, v := range fields {
		out[name] = Change{Before: v}
	}
	return out
}
