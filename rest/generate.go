package rest

// The served OpenAPI document (openapi/openapi.json, embedded by ops.go) is
// openapi/skeleton.json, kept by hand, with the components ent/schema
// declares (rest/openapi/gen).
//go:generate go run ./openapi/gen
