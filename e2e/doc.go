// Package e2e holds the browser test of the GraphiQL playground: a Go test
// runs the real server and seeds it, a node script (playwright-core driving
// Debian's chromium) uses the playground. Run it with `make e2e`.
package e2e
