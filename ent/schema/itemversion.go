package schema

import (
	"context"

	"entgo.io/ent"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/hook"
)

// itemVersion moves an item's version by one on every update, in the same
// statement (version = version + 1), so two writers that both read version n
// cannot both write n+1. Every update is a change: the service does not save
// a PUT that changes nothing, which keeps its updated_at, its event and its
// version alike. A mutation that sets the version itself is left alone.
func itemVersion() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.ItemFunc(func(ctx context.Context, m *gen.ItemMutation) (ent.Value, error) {
			_, set := m.Version()
			_, added := m.AddedVersion()
			if !set && !added {
				m.AddVersion(1)
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpUpdate|ent.OpUpdateOne)
}
