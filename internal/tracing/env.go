package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Variables are the OTEL_* variables the server honours: those this
// package reads (whether tracing is on, the exporter's, the sampler, the
// propagators), and those the SDK's batcher and resource read themselves.
// docs/deploy.md describes each.
var Variables = []string{
	"OTEL_SDK_DISABLED",
	"OTEL_TRACES_EXPORTER",
	"OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION",
	"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_INSECURE",
	"OTEL_EXPORTER_OTLP_TRACES_INSECURE",
	"OTEL_TRACES_SAMPLER",
	"OTEL_TRACES_SAMPLER_ARG",
	"OTEL_PROPAGATORS",
	"OTEL_SERVICE_NAME",
	"OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_BSP_SCHEDULE_DELAY",
	"OTEL_BSP_EXPORT_TIMEOUT",
	"OTEL_BSP_MAX_QUEUE_SIZE",
	"OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
	"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
	"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
	"OTEL_SPAN_EVENT_COUNT_LIMIT",
	"OTEL_SPAN_LINK_COUNT_LIMIT",
}

// FromEnv switches tracing on when the environment asks for it, and
// returns nil (off) otherwise. On means OTEL_TRACES_EXPORTER=otlp, or an
// OTLP endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) with OTEL_TRACES_EXPORTER unset;
// OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true keep it off. A value
// this server does not support is an error naming the variable, never a
// silent fallback.
func FromEnv(ctx context.Context) (*Tracing, error) {
	return fromEnv(ctx, os.LookupEnv)
}

func fromEnv(ctx context.Context, lookup func(string) (string, bool)) (*Tracing, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	if disabled := get("OTEL_SDK_DISABLED"); disabled != "" {
		off, err := strconv.ParseBool(disabled)
		if err != nil {
			return nil, fmt.Errorf("OTEL_SDK_DISABLED: want true or false, got %q", disabled)
		}
		if off {
			return nil, nil
		}
	}
	switch exporter := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return nil, nil
	case "otlp":
	case "":
		if get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: want otlp or none, got %q", exporter)
	}

	var errs []error
	sampler, never, err := samplerFrom(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG"))
	errs = append(errs, err)
	prop, err := propagatorFrom(get("OTEL_PROPAGATORS"))
	errs = append(errs, err)
	protocol := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp *otlpExporter
	switch protocol {
	case "", "http/protobuf", "grpc":
		cfg, err := otlpConfigFrom(protocol == "grpc", get)
		errs = append(errs, err)
		exp = newOTLPExporter(cfg)
	default:
		errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: want http/protobuf or grpc, got %q", protocol))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", ServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The exporter connects at its first export: a collector that is down
	// costs spans, never the start of the server.
	return New(Options{
		Processor:  sdktrace.NewBatchSpanProcessor(exp), // OTEL_BSP_* tune it
		Sampler:    sampler,
		Never:      never,
		Resource:   res,
		Propagator: prop,
	}), nil
}

// samplerFrom is the sampler that OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name, and whether it can never sample.
func samplerFrom(name, arg string) (s sdktrace.Sampler, never bool, err error) {
	ratio := 1.0
	if arg != "" && strings.HasSuffix(name, "traceidratio") {
		ratio, err = strconv.ParseFloat(arg, 64)
		if err != nil || ratio < 0 || ratio > 1 {
			return nil, false, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: want a ratio from 0 to 1, got %q", arg)
		}
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), false, nil
	case "always_on":
		return sdktrace.AlwaysSample(), false, nil
	case "always_off":
		return sdktrace.NeverSample(), true, nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), ratio == 0, nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), false, nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), false, nil
	default:
		return nil, false, fmt.Errorf("OTEL_TRACES_SAMPLER: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio, got %q", name)
	}
}

// propagatorFrom is the propagator OTEL_PROPAGATORS names (default
// tracecontext,baggage).
func propagatorFrom(list string) (propagation.TextMapPropagator, error) {
	if list == "" {
		list = "tracecontext,baggage"
	}
	var props []propagation.TextMapPropagator
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "tracecontext":
			props = append(props, propagation.TraceContext{})
		case "baggage":
			props = append(props, propagation.Baggage{})
		case "none":
		default:
			return nil, fmt.Errorf("OTEL_PROPAGATORS: want tracecontext, baggage or none, got %q", name)
		}
	}
	return propagation.NewCompositeTextMapPropagator(props...), nil
}
