// Package resource holds the public JSON shape of each resource: what REST
// responses carry in data and what webhook events carry, so the two can never
// disagree. Timestamps are RFC 3339 in UTC. The shape of every resource that
// is its fields as ent holds them (Item, User) is generated from its schema
// into resources.generated.go (ent/entc_rest.go); the others, which show an
// edge, a secret once or a computed value, are written here.
package resource
