package rest

import (
	"fmt"
	"net/url"
	"testing"
)

// BenchmarkParseListParams reads the query of GET /items.
func BenchmarkParseListParams(b *testing.B) {
	for _, q := range []string{"", "limit=20", "page=3&limit=50&status=active&sort=name&order=asc"} {
		b.Run(fmt.Sprintf("%q", q), func(b *testing.B) {
			v, err := url.ParseQuery(q)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseListParams(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
