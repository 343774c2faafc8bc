package tracing

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// encodeSpans writes spans as OTLP's ExportTraceServiceRequest
// (opentelemetry-proto, collector/trace/v1) in protobuf's wire format, by
// hand: the generated OTLP types and the gRPC service they come with cost
// every start resident memory, tracing on or off (docs/development.md,
// "Idle footprint"). Spans are grouped by resource, then by
// instrumentation scope, in the order they come.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourceGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
	}
	var groups []*resourceGroup
	for _, s := range spans {
		var rg *resourceGroup
		for _, g := range groups {
			if g.res == s.Resource() {
				rg = g
				break
			}
		}
		if rg == nil {
			rg = &resourceGroup{res: s.Resource()}
			groups = append(groups, rg)
		}
		var sg *scopeGroup
		for _, g := range rg.scopes {
			if g.scope == s.InstrumentationScope() {
				sg = g
				break
			}
		}
		if sg == nil {
			sg = &scopeGroup{scope: s.InstrumentationScope()}
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	var out []byte
	for _, rg := range groups {
		out = message(out, 1, func(b []byte) []byte { // ResourceSpans
			if rg.res != nil {
				b = message(b, 1, func(b []byte) []byte { // Resource
					return keyValues(b, 1, rg.res.Attributes())
				})
				b = str(b, 3, rg.res.SchemaURL())
			}
			for _, sg := range rg.scopes {
				b = message(b, 2, func(b []byte) []byte { // ScopeSpans
					b = message(b, 1, func(b []byte) []byte { // InstrumentationScope
						b = str(b, 1, sg.scope.Name)
						b = str(b, 2, sg.scope.Version)
						return keyValues(b, 3, sg.scope.Attributes.ToSlice())
					})
					for _, s := range sg.spans {
						b = message(b, 2, func(b []byte) []byte { return span(b, s) })
					}
					return str(b, 3, sg.scope.SchemaURL)
				})
			}
			return b
		})
	}
	return out
}

// span writes the fields of one Span.
func span(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = bytesField(b, 1, tid[:])
	b = bytesField(b, 2, sid[:])
	b = str(b, 3, sc.TraceState().String())
	if p := s.Parent(); p.SpanID().IsValid() {
		psid := p.SpanID()
		b = bytesField(b, 4, psid[:])
	}
	b = str(b, 5, s.Name())
	b = varint(b, 6, uint64(spanKind(s.SpanKind())))
	b = fixed64(b, 7, unixNano(s.StartTime().UnixNano()))
	b = fixed64(b, 8, unixNano(s.EndTime().UnixNano()))
	b = keyValues(b, 9, s.Attributes())
	b = varint(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = message(b, 11, func(b []byte) []byte { // Span.Event
			b = fixed64(b, 1, unixNano(e.Time.UnixNano()))
			b = str(b, 2, e.Name)
			b = keyValues(b, 3, e.Attributes)
			return varint(b, 4, uint64(e.DroppedAttributeCount))
		})
	}
	b = varint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = message(b, 13, func(b []byte) []byte { // Span.Link
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = bytesField(b, 1, ltid[:])
			b = bytesField(b, 2, lsid[:])
			b = str(b, 3, l.SpanContext.TraceState().String())
			b = keyValues(b, 4, l.Attributes)
			b = varint(b, 5, uint64(l.DroppedAttributeCount))
			return fixed32(b, 6, spanFlags(l.SpanContext, l.SpanContext.TraceFlags()))
		})
	}
	b = varint(b, 14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		b = message(b, 15, func(b []byte) []byte { // Status
			b = str(b, 2, st.Description)
			return varint(b, 3, uint64(statusCode(st.Code)))
		})
	}
	return fixed32(b, 16, spanFlags(s.Parent(), sc.TraceFlags()))
}

// spanFlags are OTLP's flags of a span or a link: its trace flags, and
// whether its parent (a link: the linked span) is remote, known.
func spanFlags(remote trace.SpanContext, flags trace.TraceFlags) uint32 {
	const hasIsRemote, isRemote = 0x100, 0x200
	f := uint32(hasIsRemote) | uint32(flags)
	if remote.IsRemote() {
		f |= isRemote
	}
	return f
}

// spanKind is OTLP's SpanKind, which numbers kinds as the API does.
func spanKind(k trace.SpanKind) trace.SpanKind {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return trace.SpanKindUnspecified
	}
	return k
}

// statusCode is OTLP's StatusCode (unset 0, ok 1, error 2), which numbers
// them otherwise than the API's codes.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func unixNano(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// keyValues writes each attribute as a KeyValue in field num.
func keyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = message(b, num, func(b []byte) []byte {
			b = str(b, 1, string(kv.Key))
			return message(b, 2, func(b []byte) []byte { return anyValue(b, kv.Value) })
		})
	}
	return b
}

// anyValue writes the fields of an AnyValue.
func anyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return boolField(b, 2, v.AsBool())
	case attribute.INT64:
		return protowire.AppendVarint(protowire.AppendTag(b, 3, protowire.VarintType), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return protowire.AppendFixed64(protowire.AppendTag(b, 4, protowire.Fixed64Type), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), v.AsString())
	case attribute.BYTESLICE:
		return bytesField(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return array(b, len(v.AsBoolSlice()), func(b []byte, i int) []byte { return boolField(b, 2, v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendVarint(protowire.AppendTag(b, 3, protowire.VarintType), uint64(s[i]))
		})
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendFixed64(protowire.AppendTag(b, 4, protowire.Fixed64Type), math.Float64bits(s[i]))
		})
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), s[i])
		})
	case attribute.SLICE:
		s := v.AsSlice()
		return array(b, len(s), func(b []byte, i int) []byte { return anyValue(b, s[i]) })
	case attribute.MAP:
		m := v.AsMap()
		return message(b, 6, func(b []byte) []byte { return keyValues(b, 1, m) }) // KeyValueList
	}
	return b // EMPTY: an AnyValue without a value
}

// array writes an ArrayValue of n AnyValues (field 5 of AnyValue).
func array(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	return message(b, 5, func(b []byte) []byte {
		for i := range n {
			b = message(b, 1, func(b []byte) []byte { return elem(b, i) })
		}
		return b
	})
}

// message appends field num holding what body appends, length-prefixed.
// The length takes one to three bytes for what a span holds; it is
// reserved as one and the body moved when it needs more.
func message(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0)
	b = body(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	protowire.AppendVarint(b[:at], uint64(n))
	return b
}

// The scalar fields, omitted at their zero value as proto3 does.

func str(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func varint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func boolField(b []byte, num protowire.Number, v bool) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), protowire.EncodeBool(v))
}

func fixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func fixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
}
