package rest

import (
	"fmt"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/gin-gonic/gin"
)

// durationBuckets are the upper bounds of the request latency histogram.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// httpMetrics are the request metrics of the router. Routes are labelled by
// their template (c.FullPath()), never by the raw path, so that ids in URLs
// cannot grow the number of series without bound: the label values come
// from the routes the router binds, knownMethod and the status codes.
type httpMetrics struct {
	set      *metrics.Set
	inFlight *metrics.Gauge
	requests sync.Map // requestKey → *metrics.Counter
	duration sync.Map // durationKey → *metrics.PrometheusHistogram
}

type requestKey struct {
	route, method string
	status        int
}

type durationKey struct{ route, method string }

func newHTTPMetrics(set *metrics.Set) *httpMetrics {
	return &httpMetrics{set: set, inFlight: set.NewGauge("http_requests_in_flight", nil)}
}

// counter returns the series of http_requests_total for k, made on first use.
func (m *httpMetrics) counter(k requestKey) *metrics.Counter {
	if c, ok := m.requests.Load(k); ok {
		return c.(*metrics.Counter)
	}
	c := m.set.GetOrCreateCounter(fmt.Sprintf(`http_requests_total{route=%q,method=%q,status="%d"}`, k.route, k.method, k.status))
	m.requests.Store(k, c)
	return c
}

// histogram returns the series of http_request_duration_seconds for k.
func (m *httpMetrics) histogram(k durationKey) *metrics.PrometheusHistogram {
	if h, ok := m.duration.Load(k); ok {
		return h.(*metrics.PrometheusHistogram)
	}
	h := m.set.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`http_request_duration_seconds{route=%q,method=%q}`, k.route, k.method), durationBuckets)
	m.duration.Store(k, h)
	return h
}

// observe counts and times every request, including those answered by
// recovery (it runs before it) and by NoRoute/NoMethod. Without a metrics
// set it does nothing.
func observe(set *metrics.Set) gin.HandlerFunc {
	if set == nil {
		return func(c *gin.Context) { c.Next() }
	}
	m := newHTTPMetrics(set)
	return func(c *gin.Context) {
		start := time.Now()
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		method := knownMethod(c.Request.Method)
		m.counter(requestKey{route, method, c.Writer.Status()}).Inc()
		m.histogram(durationKey{route, method}).UpdateDuration(start)
	}
}

// knownMethod keeps arbitrary method names sent by clients out of the labels.
func knownMethod(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "other"
}
