//go:build ignore

// Command gqlgen generates the GraphQL executor (graph/generated), models and
// resolver stubs as `go tool gqlgen` does, from gqlgen.yml, then rewrites
// the hot paths of the generated executor onto package graph/serial
// (graph/internal/gqlrewrite says what and why). The rewrite fails
// generation, naming the function and the kind of rewrite, wherever the
// generated code no longer has the shape it expects (a gqlgen upgrade).
//
// The committed choice is the -rewrite of graph/generate.go's go:generate
// line. With -rewrite=off, or GQLGEN_REWRITE=off in the environment (which
// wins), it stops after gqlgen: the executor is gqlgen's own, with no
// graph/serial in it, and the server works on it the same (CI runs graph's
// tests on that build; a gqlgen upgrade the rewrite does not follow yet is
// committed with -rewrite=off; docs/development.md).
package main

import (
	"flag"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/acme/itemsvc/graph/internal/gqlrewrite"
)

// snapshot is where gqlgen's own output is kept for gqlrewrite's tests.
const snapshot = "graph/internal/gqlrewrite/testdata/gqlgen"

// rewrite is on or off: -rewrite, GQLGEN_REWRITE.
var rewrite string

// skip lists kinds of rewrite to leave out (gqlrewrite.Kinds' names,
// comma-separated): -skip, GQLGEN_REWRITE_SKIP. It serves to measure what
// each kind buys (docs/ablation.md); the committed choice skips none.
var skip string

func main() {
	flag.StringVar(&rewrite, "rewrite", "on", "rewrite the executor onto graph/serial: on or off (GQLGEN_REWRITE overrides)")
	flag.StringVar(&skip, "skip", "", "kinds of rewrite to leave out, comma-separated (GQLGEN_REWRITE_SKIP overrides)")
	flag.Parse()
	if env := os.Getenv("GQLGEN_REWRITE"); env != "" {
		rewrite = env
	}
	if env := os.Getenv("GQLGEN_REWRITE_SKIP"); env != "" {
		skip = env
	}
	var kinds []gqlrewrite.Kind
	for _, name := range strings.Split(skip, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		k := gqlrewrite.Kind(name)
		if !slices.Contains(gqlrewrite.Kinds, k) {
			log.Fatalf("gqlgen: skip %q: not a kind of rewrite (%q)", name, gqlrewrite.Kinds)
		}
		kinds = append(kinds, k)
	}
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		log.Fatalf("gqlgen: load config: %v", err)
	}
	if err := api.Generate(cfg); err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
	switch rewrite {
	case "off":
		log.Printf("gqlgen: rewrite off: %s is gqlgen's own executor, not rewritten", cfg.Exec.Dir())
		return
	case "on":
	default:
		log.Fatalf("gqlgen: rewrite %q: want on or off (-rewrite, GQLGEN_REWRITE)", rewrite)
	}
	if _, err := gqlrewrite.Dir(cfg.Exec.Dir(), snapshot, cfg.Schema, kinds...); err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
}
