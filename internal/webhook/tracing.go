package webhook

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme/itemsvc/ent"
)

// startSpan starts the span of one delivery attempt. It is a new trace (the
// attempt runs long after the request that caused it, maybe on another
// replica), linked to the span of the transaction that wrote the event when
// the event recorded one (Event.trace_parent).
func (d *Dispatcher) startSpan(ctx context.Context, dl *ent.Delivery) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String("webhook.delivery.id", dl.ID),
			attribute.String("webhook.endpoint.id", dl.EndpointID),
			attribute.String("webhook.event.id", dl.EventID),
			attribute.Int("webhook.attempt", dl.Attempts+1),
		),
	}
	if ev := dl.Edges.Event; ev != nil {
		if sc, ok := EventSpanContext(ev); ok {
			opts = append(opts, trace.WithLinks(trace.Link{
				SpanContext: sc,
				Attributes:  []attribute.KeyValue{attribute.String("link.reason", "event written")},
			}))
		}
	}
	return d.opts.Tracer.Start(ctx, "webhook delivery", opts...)
}

// EventSpanContext is the span context of the change that wrote ev, from
// its stored traceparent; false when it has none (tracing was off or the
// change not sampled) or the value does not parse.
func EventSpanContext(ev *ent.Event) (trace.SpanContext, bool) {
	if ev.TraceParent == "" {
		return trace.SpanContext{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": ev.TraceParent})
	sc := trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}
