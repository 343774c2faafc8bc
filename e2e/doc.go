// Package e2e holds the browser test of the server's pages, the GraphiQL
// playground and the Redoc API docs, with no internet access: a Go test
// runs the real server and seeds it, a node script (playwright-core driving
// Debian's chromium) signs in on the playground, runs queries, signs out and
// reads the docs, and fails if a page tries to reach any other host. Beside
// it, real clients follow the event streams (realtime.test.mjs),
// graphql-http's server audit, the GraphQL-over-HTTP specification's own
// suite, checks /graphql (audit.test.mjs), and the typed clients of
// docs/clients.md (codegen/) are generated from the live server and
// compiled with tsc --strict. Run them with `make e2e`.
package e2e
