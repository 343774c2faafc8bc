// Package rule holds the privacy rules of the schemas: who may read and change
// what. They read the viewer from the context, so REST, GraphQL, the CLI and
// tests are all held to the same rules.
package rule

import (
	"context"

	"entgo.io/ent"
	"entgo.io/ent/entql"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/webhookendpoint"
	"github.com/acme/itemsvc/internal/viewer"
)

// DenyIfNoViewer denies anonymous access. Internal work that runs without a
// viewer (login, the webhook dispatcher) states it with privacy.DecisionContext.
func DenyIfNoViewer() privacy.QueryMutationRule {
	return privacy.ContextQueryMutationRule(func(ctx context.Context) error {
		if _, ok := viewer.FromContext(ctx); !ok {
			return privacy.Denyf("no viewer in context")
		}
		return privacy.Skip
	})
}

// AllowIfAdmin lets admins read and change everything.
func AllowIfAdmin() privacy.QueryMutationRule {
	return privacy.ContextQueryMutationRule(func(ctx context.Context) error {
		if v, ok := viewer.FromContext(ctx); ok && v.Admin() {
			return privacy.Allow
		}
		return privacy.Skip
	})
}

// ownedFilter is implemented by the filters of entities with a user_id field.
type ownedFilter interface {
	WhereUserID(entql.StringP)
}

// FilterOwner limits queries, updates and deletes to the viewer's own rows.
func FilterOwner() privacy.QueryMutationRule {
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		v, ok := viewer.FromContext(ctx)
		if !ok {
			return privacy.Denyf("no viewer in context")
		}
		of, ok := f.(ownedFilter)
		if !ok {
			return privacy.Denyf("unexpected filter type %T", f)
		}
		of.WhereUserID(entql.StringEQ(v.UserID))
		return privacy.Skip
	})
}

// ownedMutation is implemented by the mutations of entities with a user_id field.
type ownedMutation interface {
	UserID() (string, bool)
}

// AllowCreateOwn lets a viewer create rows owned by themselves, and no one else.
func AllowCreateOwn() privacy.MutationRule {
	return privacy.OnMutationOperation(
		privacy.MutationRuleFunc(func(ctx context.Context, m ent.Mutation) error {
			v, ok := viewer.FromContext(ctx)
			if !ok {
				return privacy.Denyf("no viewer in context")
			}
			om, ok := m.(ownedMutation)
			if !ok {
				return privacy.Denyf("unexpected mutation type %T", m)
			}
			if id, set := om.UserID(); set && id == v.UserID {
				return privacy.Allow
			}
			return privacy.Denyf("viewer may only create rows they own")
		}),
		ent.OpCreate,
	)
}

// FilterSelf limits user queries to the viewer's own user.
func FilterSelf() privacy.QueryRule {
	return privacy.UserQueryRuleFunc(func(ctx context.Context, q *gen.UserQuery) error {
		v, ok := viewer.FromContext(ctx)
		if !ok {
			return privacy.Denyf("no viewer in context")
		}
		q.Filter().WhereID(entql.StringEQ(v.UserID))
		return privacy.Skip
	})
}

// FilterDeliveryOwner limits deliveries to those of the viewer's endpoints.
func FilterDeliveryOwner() privacy.QueryRule {
	return privacy.DeliveryQueryRuleFunc(func(ctx context.Context, q *gen.DeliveryQuery) error {
		v, ok := viewer.FromContext(ctx)
		if !ok {
			return privacy.Denyf("no viewer in context")
		}
		q.Where(delivery.HasEndpointWith(webhookendpoint.UserID(v.UserID)))
		return privacy.Skip
	})
}
