package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/webhookendpoint"
)

// sweepEvery is how often held deliveries are checked for expiry, on the
// dispatcher's clock.
const sweepEvery = time.Minute

// expireHeld fails the pending deliveries older than PauseRetention whose
// endpoint holds them back: paused (active: false), or failing long enough
// for the circuit breaker to engage. Held deliveries spend no attempts, so
// without this an endpoint left paused, or dead, would keep events forever.
// They stay in the log (state failed, last_error saying why) and can be
// recovered or retried once the endpoint is active and answering. It runs
// at most once per sweepEvery.
func (d *Dispatcher) expireHeld(ctx context.Context) error {
	now := d.now()
	if now.Sub(d.swept) < sweepEvery {
		return nil
	}
	d.swept = now
	ctx = system(ctx)
	stale := []predicate.Delivery{
		delivery.StateEQ(delivery.StatePending),
		delivery.CreatedAtLT(now.Add(-d.opts.PauseRetention)),
		delivery.HasEndpointWith(webhookendpoint.Or(
			webhookendpoint.Active(false),
			webhookendpoint.ConsecutiveFailuresGTE(d.opts.BreakerThreshold),
		)),
	}
	// Look before writing: on SQLite every write takes the lock the API needs.
	if found, err := d.db.Delivery.Query().Where(stale...).Exist(ctx); err != nil || !found {
		return err
	}
	n, err := d.db.Delivery.Update().
		Where(stale...).
		SetState(delivery.StateFailed).
		SetLastError(fmt.Sprintf("expired: not delivered within %s while the webhook was paused or failing", d.opts.PauseRetention)).
		ClearClaimedUntil().
		Save(ctx)
	if err != nil {
		return fmt.Errorf("expire deliveries: %w", err)
	}
	d.log.InfoContext(ctx, "expired held webhook deliveries", "deliveries", n, "retention", d.opts.PauseRetention)
	return nil
}
