package rule

import (
	"context"

	gen "github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/deliveryattempt"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/ent/webhookendpoint"
	"github.com/acme/itemsvc/internal/viewer"
)

// FilterAttemptOwner limits delivery attempts to those of the viewer's
// endpoints, like FilterDeliveryOwner one level further down.
func FilterAttemptOwner() privacy.QueryRule {
	return privacy.DeliveryAttemptQueryRuleFunc(func(ctx context.Context, q *gen.DeliveryAttemptQuery) error {
		v, ok := viewer.FromContext(ctx)
		if !ok {
			return privacy.Denyf("no viewer in context")
		}
		q.Where(deliveryattempt.HasDeliveryWith(delivery.HasEndpointWith(webhookendpoint.UserID(v.UserID))))
		return privacy.Skip
	})
}
