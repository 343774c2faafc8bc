package testutil

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is what /metrics serves, read by Prometheus's own text parser, so
// that a test also proves the exposition is valid: metric families by name.
type Metrics map[string]*dto.MetricFamily

// Scrape reads /metrics without a token, as a scraper would.
func (e *Env) Scrape() Metrics {
	e.T.Helper()
	r := e.Do(Request{Method: "GET", Path: "/metrics"})
	if r.Status != 200 {
		e.T.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	return ParseMetrics(e.T, r.Body)
}

// ParseMetrics parses a /metrics exposition (a scrape of a server in
// another process).
func ParseMetrics(t testing.TB, text []byte) Metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, text)
	}
	return fams
}

// Has reports whether the family is exported.
func (m Metrics) Has(family string) bool { _, ok := m[family]; return ok }

// Value sums the counters, histogram sample counts or gauges of a family
// whose labels include labels (nil: every series).
func (m Metrics) Value(family string, labels map[string]string) float64 {
	var sum float64
	for _, s := range m[family].GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case s.Counter != nil:
			sum += s.GetCounter().GetValue()
		case s.Histogram != nil:
			sum += float64(s.GetHistogram().GetSampleCount())
		case s.Gauge != nil:
			sum += s.GetGauge().GetValue()
		case s.Untyped != nil:
			sum += s.GetUntyped().GetValue()
		}
	}
	return sum
}
