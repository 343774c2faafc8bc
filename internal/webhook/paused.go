package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/webhookendpoint"
)

// sweepEvery is how often the pending deliveries of paused endpoints are
// checked for expiry, on the dispatcher's clock.
const sweepEvery = time.Minute

// expirePaused fails the pending deliveries of paused endpoints that are
// older than PauseRetention, so that an endpoint left paused does not keep
// events forever. They stay in the log (state failed, last_error saying why)
// and can be recovered or retried once the endpoint is active again. It runs
// at most once per sweepEvery.
func (d *Dispatcher) expirePaused(ctx context.Context) error {
	now := d.now()
	if now.Sub(d.swept) < sweepEvery {
		return nil
	}
	d.swept = now
	ctx = system(ctx)
	stale := []predicate.Delivery{
		delivery.StateEQ(delivery.StatePending),
		delivery.CreatedAtLT(now.Add(-d.opts.PauseRetention)),
		delivery.HasEndpointWith(webhookendpoint.Active(false)),
	}
	// Look before writing: on SQLite every write takes the lock the API needs.
	if found, err := d.db.Delivery.Query().Where(stale...).Exist(ctx); err != nil || !found {
		return err
	}
	n, err := d.db.Delivery.Update().
		Where(stale...).
		SetState(delivery.StateFailed).
		SetLastError(fmt.Sprintf("expired: the webhook was paused and the event is older than %s", d.opts.PauseRetention)).
		ClearClaimedUntil().
		Save(ctx)
	if err != nil {
		return fmt.Errorf("expire deliveries: %w", err)
	}
	d.log.InfoContext(ctx, "expired the deliveries of paused webhooks", "deliveries", n, "retention", d.opts.PauseRetention)
	return nil
}
