package webhook

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/predicate"
	"github.com/acme/itemsvc/ent/webhookendpoint"
)

// claimLock is the PostgreSQL advisory lock that makes claims take turns
// across replicas ("itemsvc.webhook.claim" as a number).
const claimLock int64 = 0x69746d7377686b63

// capacity is how many attempts an endpoint of the class may have in
// flight: perEndpoint, or one while its last attempt had failed.
func capacity(perEndpoint int, failing bool) int {
	if failing {
		return 1
	}
	return perEndpoint
}

// ready selects the endpoints whose deliveries may be claimed at now:
// active, not backing off, of the class (failing: whose last attempt
// failed), with a delivery waiting, and with room for another attempt.
func ready(now time.Time, perEndpoint int, failing bool) []predicate.WebhookEndpoint {
	class := webhookendpoint.ConsecutiveFailuresEQ(0)
	if failing {
		class = webhookendpoint.ConsecutiveFailuresGT(0)
	}
	return []predicate.WebhookEndpoint{
		webhookendpoint.Active(true),
		webhookendpoint.Or(webhookendpoint.BackoffUntilIsNil(), webhookendpoint.BackoffUntilLTE(now)),
		class,
		webhookendpoint.HasDeliveriesWith(waiting(now)...),
		hasRoom(now, capacity(perEndpoint, failing)),
	}
}

// hasRoom keeps the endpoints with fewer than limit attempts in flight:
// pending deliveries under a live claim, whichever dispatcher holds them
// (an index on endpoint_id, claimed_until keeps it to those rows).
func hasRoom(now time.Time, limit int) predicate.WebhookEndpoint {
	return predicate.WebhookEndpoint(func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			b.WriteString("(SELECT COUNT(*) FROM deliveries f WHERE f.endpoint_id = ").Ident(s.C(webhookendpoint.FieldID)).
				WriteString(" AND f.claimed_until >= ").Arg(now).
				WriteString(" AND f.state = ").Arg(delivery.StatePending.String()).
				WriteString(") < ").Arg(limit)
		}))
	})
}

// byOldestPending orders endpoints by their oldest pending delivery, so that
// slots go to the events that have waited longest (an index lookup each).
// The state is written as a literal: ent's builder keeps no arguments of an
// ORDER BY expression.
func byOldestPending() webhookendpoint.OrderOption {
	return func(s *sql.Selector) {
		s.OrderExprFunc(func(b *sql.Builder) {
			b.WriteString("(SELECT MIN(w.next_attempt_at) FROM deliveries w WHERE w.endpoint_id = ").Ident(s.C(webhookendpoint.FieldID)).
				WriteString(" AND w.state = '" + delivery.StatePending.String() + "')")
		})
	}
}

// candidates picks, for one class of endpoints, the deliveries that claim
// may take: the endpoints with room whose oldest waiting delivery is oldest
// (at most limit of them), and of each its oldest waiting deliveries, as
// many as it has room for. Each step is an index lookup, whatever the
// backlog.
func (d *Dispatcher) candidates(ctx context.Context, tx *ent.Tx, now time.Time, limit int, failing bool) ([]string, error) {
	eps, err := tx.WebhookEndpoint.Query().
		Where(ready(now, d.opts.PerEndpoint, failing)...).
		Order(byOldestPending(), webhookendpoint.ByID()).
		Limit(limit).
		IDs(ctx)
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	var busy []struct {
		EndpointID string `json:"endpoint_id"`
		Count      int    `json:"count"`
	}
	if err := tx.Delivery.Query().
		Where(delivery.EndpointIDIn(eps...), delivery.StateEQ(delivery.StatePending), delivery.ClaimedUntilGTE(now)).
		GroupBy(delivery.FieldEndpointID).
		Aggregate(ent.Count()).
		Scan(ctx, &busy); err != nil {
		return nil, fmt.Errorf("count attempts in flight: %w", err)
	}
	inFlight := map[string]int{}
	for _, b := range busy {
		inFlight[b.EndpointID] = b.Count
	}
	var ids []string
	for _, ep := range eps {
		room := min(capacity(d.opts.PerEndpoint, failing)-inFlight[ep], limit)
		if room <= 0 {
			continue
		}
		some, err := tx.Delivery.Query().
			Where(delivery.EndpointID(ep)).
			Where(waiting(now)...).
			Order(delivery.ByNextAttemptAt(), delivery.ByCreatedAt(), delivery.ByID()).
			Limit(room).
			IDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("select waiting deliveries: %w", err)
		}
		ids = append(ids, some...)
	}
	return ids, nil
}

// failingEndpoint reports whether an endpoint's last attempt failed, as it
// was when its delivery was claimed.
func failingEndpoint(ep *ent.WebhookEndpoint) bool {
	return ep != nil && ep.ConsecutiveFailures > 0
}

// closeBreaker forgets an endpoint's failures after a success; a healthy
// endpoint's row is not written.
func (d *Dispatcher) closeBreaker(ctx context.Context, tx *ent.Tx, endpointID string) error {
	err := tx.WebhookEndpoint.Update().
		Where(webhookendpoint.ID(endpointID), webhookendpoint.ConsecutiveFailuresGT(0)).
		SetConsecutiveFailures(0).
		ClearBackoffUntil().
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("reset endpoint failures: %w", err)
	}
	return nil
}

// countFailure adds a failed attempt to its endpoint's run of failures and,
// from the breaker's threshold on, makes the endpoint back off: none of its
// deliveries is claimed until the pause is over, and the next attempt after
// it is a single probe. It reports whether the breaker opened.
func (d *Dispatcher) countFailure(ctx context.Context, tx *ent.Tx, endpointID string, now time.Time) (bool, error) {
	ep, err := tx.WebhookEndpoint.UpdateOneID(endpointID).AddConsecutiveFailures(1).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("count endpoint failure: %w", err)
	}
	if ep.ConsecutiveFailures < d.opts.BreakerThreshold {
		return false, nil
	}
	pause := d.breakerPause(ep.ConsecutiveFailures)
	until := now.Add(pause)
	if err := tx.WebhookEndpoint.UpdateOneID(endpointID).SetBackoffUntil(until).Exec(ctx); err != nil {
		return false, fmt.Errorf("back off endpoint: %w", err)
	}
	d.log.InfoContext(ctx, "webhook endpoint keeps failing: backing off",
		"endpoint", endpointID, "failures", ep.ConsecutiveFailures, "pause", pause, "until", until)
	return true, nil
}

// breakerPause is how long an endpoint with that many failures in a row
// backs off: BreakerPause at the threshold, doubling with each failure past
// it, at most BreakerMaxPause.
func (d *Dispatcher) breakerPause(failures int) time.Duration {
	pause := d.opts.BreakerPause
	for range failures - d.opts.BreakerThreshold {
		if pause >= d.opts.BreakerMaxPause {
			break
		}
		pause *= 2
	}
	return min(pause, d.opts.BreakerMaxPause)
}

// span is the time from a delivery's first attempt to its last.
func span(schedule []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range schedule {
		total += d
	}
	return total
}
