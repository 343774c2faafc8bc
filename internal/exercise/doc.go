// Package exercise holds the test of issue 43's promise that a field
// declared once in ent/schema reaches every surface with no other hand
// edit: on a scratch clone of the repository it adds one field to Item,
// runs `make migration` and `go generate ./...`, builds and starts the
// server, and checks the field on REST, GraphQL, the OpenAPI document,
// webhooks, the event history and the admin page's create form, and that
// git then sees only the schema, the migrations and generated files. It
// takes minutes, so it runs in CI (.ci/run sets ITEMSVC_EXERCISE=1) and not
// in `make test`: exercise_test.go says how to run it by hand.
package exercise
