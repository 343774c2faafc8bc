package rest

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the request metrics of the router. Routes are labelled by
// their template (c.FullPath()), never by the raw path, so that ids in URLs
// cannot grow the number of series without bound.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// observe counts and times every request, including those answered by
// recovery (it runs before it) and by NoRoute/NoMethod. Without a registry it
// does nothing. (It takes the concrete type so that a nil registry is nil
// here, not an interface holding a nil pointer.)
func observe(reg *prometheus.Registry) gin.HandlerFunc {
	if reg == nil {
		return func(c *gin.Context) { c.Next() }
	}
	m := newHTTPMetrics(reg)
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
		m.requests.WithLabelValues(route, method, strconv.Itoa(c.Writer.Status())).Inc()
		m.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
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
