package serial

import (
	"os"
	"strings"
)

// ablate lists mechanisms of this package switched off by SERIAL_ABLATE
// (comma-separated), to measure what each buys (docs/ablation.md):
// render, arena, ctxreuse, template, sized, memo, pool.
var ablate = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("SERIAL_ABLATE"), ",") {
		m[strings.TrimSpace(s)] = true
	}
	return m
}()

var (
	noRender   = ablate["render"]
	noArena    = ablate["arena"]
	noReuse    = ablate["ctxreuse"]
	noTemplate = ablate["template"]
	noSized    = ablate["sized"]
	noMemo     = ablate["memo"]
	noPool     = ablate["pool"]
)
