//go:build benchpprof

package main

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

// Only in builds with -tags benchpprof (make bench -profile): serve the Go
// profiler on BENCH_PPROF_ADDR, apart from the API, so that the benchmark can
// profile the server under its load. Production builds never contain it.
func init() {
	if addr := os.Getenv("BENCH_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}
