package service_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestServiceSpeaksNoTransport keeps the service below its transports: it
// takes typed parameters and inputs, and each transport reads its own
// requests (REST's query strings in rest/params.go, GraphQL's arguments in
// graph). Its own files import nothing that reads a request.
func TestServiceSpeaksNoTransport(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{
		"net/http", "net/url",
		"github.com/gin-gonic/gin", "github.com/99designs/gqlgen", "github.com/vektah/gqlparser",
		"github.com/acme/itemsvc/rest", "github.com/acme/itemsvc/graph", "github.com/acme/itemsvc/internal/httpapi",
	}
	for _, imp := range pkg.Imports {
		for _, f := range forbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") {
				t.Errorf("internal/service imports %s: a transport reads its requests into the service's typed parameters", imp)
			}
		}
	}
}
