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

// fair keeps the due deliveries that their endpoint has room for: an
// endpoint has perEndpoint slots (one while its last attempt had failed),
// less its attempts in flight (pending, with a live claim, whichever
// dispatcher holds them), and its oldest due deliveries fill them. failing
// picks which endpoints are considered: those whose last attempt failed, or
// the others. It is one query, so it holds for every dispatcher reading the
// same rows; claim makes them read one after another on PostgreSQL.
func fair(now time.Time, perEndpoint int, failing bool) predicate.Delivery {
	room, class := perEndpoint, "e.consecutive_failures = 0"
	if failing {
		room, class = 1, "e.consecutive_failures > 0"
	}
	return predicate.Delivery(func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			b.Ident(s.C(delivery.FieldID)).WriteString(` IN (SELECT r.id FROM (` +
				`SELECT d.id, d.endpoint_id, ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.created_at, d.id) AS rn ` +
				`FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id ` +
				`WHERE d.state = `).Arg(delivery.StatePending.String()).
				WriteString(` AND d.next_attempt_at <= `).Arg(now).
				WriteString(` AND (d.claimed_until IS NULL OR d.claimed_until < `).Arg(now).
				WriteString(`) AND e.active = `).Arg(true).
				WriteString(` AND (e.backoff_until IS NULL OR e.backoff_until <= `).Arg(now).
				WriteString(`) AND ` + class + `) r WHERE r.rn <= `).Arg(room).
				WriteString(` AND r.rn + (SELECT COUNT(*) FROM deliveries f WHERE f.endpoint_id = r.endpoint_id AND f.state = `).
				Arg(delivery.StatePending.String()).
				WriteString(` AND f.claimed_until >= `).Arg(now).
				WriteString(`) <= `).Arg(room).
				WriteString(`)`)
		}))
	})
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
