package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"

	"entgo.io/ent/entc/gen"
	"entgo.io/ent/schema/field"

	"github.com/acme/itemsvc/ent/schema/api"
	"github.com/acme/itemsvc/internal/service"
)

var graph = sync.OnceValues(func() (*gen.Graph, error) { return loadGraph("../../../ent/schema") })

// item loads the graph once and returns it with its Item type.
func item(t *testing.T) (*gen.Graph, *gen.Type) {
	t.Helper()
	g, err := graph()
	if err != nil {
		t.Fatal(err)
	}
	it := findType(g.Nodes, "Item")
	if it == nil {
		t.Fatal("no Item in ent/schema")
	}
	return g, it
}

// decoded reads a document as plain JSON, for comparisons.
func decoded(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func section(doc map[string]any, name string) map[string]any {
	s, _ := doc["components"].(map[string]any)[name].(map[string]any)
	return s
}

// TestServedDocumentIsGenerated: the served document is the skeleton plus
// what the generator makes of ent/schema, byte for byte (go generate ./rest
// after a change of either); the skeleton gives a generated component at
// most its prose, and every resource's components are generated.
func TestServedDocumentIsGenerated(t *testing.T) {
	g, _ := item(t)
	skeleton, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	served, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := build(skeleton, g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, want) {
		t.Error("rest/openapi/openapi.json is not what the generator writes: run go generate ./rest (edit skeleton.json or ent/schema, never openapi.json)")
	}

	c, err := generate(g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	sk, doc := decoded(t, skeleton), decoded(t, served)
	for _, sec := range []struct {
		name string
		gen  *object
	}{{"schemas", c.schemas}, {"parameters", c.parameters}} {
		for _, name := range sec.gen.keys {
			if hand, ok := section(sk, sec.name)[name].(map[string]any); ok {
				for m := range hand {
					if !slices.Contains(prose, m) {
						t.Errorf("skeleton.json gives components.%s.%s, which ent/schema declares, its %s", sec.name, name, m)
					}
				}
			}
			if _, ok := section(doc, sec.name)[name]; !ok {
				t.Errorf("openapi.json lacks the generated components.%s.%s", sec.name, name)
			}
		}
	}
	for _, name := range []string{
		"Item", "ItemCreate", "ItemUpdate", "ItemStatus",
		"User", "UserCreate", "UserUpdate", "UserRole",
		"APIKey", "APIKeyWithSecret", "APIKeyCreate", "APIKeyUpdate", "KeyScope",
		"Webhook", "WebhookWithSecret", "WebhookCreate", "WebhookUpdate", "WebhookEvent",
		"Delivery", "DeliveryAttempt", "DeliveryState",
		"Event", "AuditEvent", "AuditAction",
	} {
		if _, ok := c.schemas.get(name); !ok {
			t.Errorf("the generator makes no %s", name)
		}
	}
	for _, name := range []string{
		"sort", "status", "user_id", "user_role", "user_disabled", "user_email",
		"key_user_id", "state", "event_type", "audit_actor_id", "audit_action",
	} {
		if _, ok := c.parameters.get(name); !ok {
			t.Errorf("the generator makes no list parameter %s", name)
		}
	}
}

// handSchemas are the schemas with properties the skeleton may define: the
// shapes that are no ent type, each with the reason.
var handSchemas = map[string]string{
	"Meta":            "the envelope's meta of every answer",
	"ListMeta":        "a page's meta in the envelope",
	"Pagination":      "a numbered page's position, computed per request",
	"ItemListMeta":    "the items page's meta in the envelope",
	"ItemPagination":  "the items page's position (numbers and cursor), computed per request",
	"KeyListMeta":     "the keys page's meta in the envelope",
	"KeyPagination":   "the keys page's position, computed per request",
	"EventListMeta":   "the events page's meta in the envelope",
	"EventPagination": "the events page's cursor, computed per request",
	"AuditListMeta":   "the audit page's meta in the envelope",
	"AuditPagination": "the audit page's cursor, computed per request",
	"ErrorBody":       "the error envelope",
	"ErrorDetails":    "the error envelope's details",
	"Failure":         "the error envelope",
	"StreamError":     "the error event of an event stream, the error envelope's body",
	"LoginRequest":    "login's argument: an API key to exchange, stored as no field",
	"Token":           "an access token: signed, never stored",
	"Deleted":         "the answer of a delete: the resource is gone",
	"KeyRevoked":      "the answer of a key's revocation",
	"RecoverRequest":  "the argument of an action (re-queue failed deliveries), no resource",
	"Recovery":        "the result of that action, counted per request",
	"Backup":          "a file of the backup folder, not a row of any ent type",
}

// handQueryParameters are the query parameters the skeleton may define:
// paging, ordering and authentication, which are no field of a resource.
var handQueryParameters = map[string]string{
	"page":         "paging: a page number",
	"limit":        "paging: a page's size",
	"cursor":       "paging: the position a page starts after",
	"order":        "ordering: the direction of the generated sort",
	"after":        "paging: the event an event list or stream starts after",
	"access_token": "authentication of an EventSource, which cannot send headers",
}

// TestSkeletonDefinesNoResource: no property of a resource or request body
// and no list query parameter is written by hand. The skeleton's schemas
// with properties are handSchemas; an operation's request body is a $ref
// (or narrows one with const, as the webhooks' bodies do); its query
// parameters, inline or components, are generated or handQueryParameters.
func TestSkeletonDefinesNoResource(t *testing.T) {
	data, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	sk := decoded(t, data)
	for name, s := range section(sk, "schemas") {
		if _, ok := handSchemas[name]; !ok && hasProperties(s) {
			t.Errorf("skeleton.json defines the properties of components.schemas.%s: declare it in ent/schema (api.Resource), or add it to handSchemas with the reason it is no ent type", name)
		}
	}
	for name := range handSchemas {
		if _, ok := section(sk, "schemas")[name]; !ok {
			t.Errorf("handSchemas lists %s, which skeleton.json does not define: take it out", name)
		}
	}
	checkQuery := func(where string, p map[string]any) {
		if p["in"] != "query" {
			return
		}
		if _, ok := handQueryParameters[p["name"].(string)]; !ok {
			t.Errorf("skeleton.json defines the query parameter %s (%s): make it an api.Filter in ent/schema, or add it to handQueryParameters with the reason it is no field", p["name"], where)
		}
	}
	for name, p := range section(sk, "parameters") {
		checkQuery("components.parameters."+name, p.(map[string]any))
	}
	for _, top := range []string{"paths", "webhooks"} {
		paths, _ := sk[top].(map[string]any)
		for path, item := range paths {
			for method, op := range item.(map[string]any) {
				o, ok := op.(map[string]any)
				if !ok {
					continue
				}
				params, _ := o["parameters"].([]any)
				if method == "parameters" {
					params, _ = op.([]any)
				}
				for _, p := range params {
					checkQuery(top+"."+path+"."+method, p.(map[string]any))
				}
				body, _ := o["requestBody"].(map[string]any)
				content, _ := body["content"].(map[string]any)
				for ct, c := range content {
					if s := c.(map[string]any)["schema"]; hasProperties(s) && !narrows(s) {
						t.Errorf("skeleton.json defines the request body of %s %s %s (%s) inline: make it a $ref to a generated component", top, method, path, ct)
					}
				}
			}
		}
	}
}

// hasProperties says whether a schema, or one within it, lists properties.
func hasProperties(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["properties"]; ok {
			return true
		}
		for _, e := range v {
			if hasProperties(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, hasProperties)
	}
	return false
}

// narrows says whether a schema is allOf a $ref whose properties it only
// pins to constants.
func narrows(v any) bool {
	s, _ := v.(map[string]any)
	all, _ := s["allOf"].([]any)
	props, _ := s["properties"].(map[string]any)
	if len(all) != 1 || hasProperties(all[0]) {
		return false
	}
	for _, p := range props {
		if m, _ := p.(map[string]any); len(m) != 1 || m["const"] == nil {
			return false
		}
	}
	return true
}

// TestItemBoundsAreTheService: the lengths ent/schema/item.go states are
// those the service checks.
func TestItemBoundsAreTheService(t *testing.T) {
	g, it := item(t)
	c, err := components(it, g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	props := mustJSON(t, c.schemas.obj("Item").obj("properties"))
	for name, max := range map[string]int{"name": service.MaxNameLen, "description": service.MaxDescriptionLen} {
		got := props[name].(map[string]any)["maxLength"]
		if got != float64(max) {
			t.Errorf("Item.%s maxLength = %v, the service allows %d: fix api.Length in ent/schema/item.go", name, got, max)
		}
	}
}

// TestAddedFieldAppears: fields added to Item show where their declaration
// says, without touching the skeleton.
func TestAddedFieldAppears(t *testing.T) {
	g, base := item(t)
	it := *base
	it.Fields = slices.Clone(base.Fields)
	str := &field.TypeInfo{Type: field.TypeString}
	it.Fields = append(it.Fields,
		// A plain field: shown, settable, required on create.
		&gen.Field{Name: "color", Type: str},
		// A field with a default, sortable and a filter.
		&gen.Field{Name: "rank", Type: &field.TypeInfo{Type: field.TypeInt}, Default: true,
			Annotations: gen.Annotations{"EntGQL": map[string]any{"OrderField": "RANK"}, "API": api.Filter("Only items of this rank.")}},
		// An immutable, nullable one: shown, taken back unchanged on update.
		&gen.Field{Name: "origin", Type: str, Immutable: true, Optional: true, Nillable: true},
		// A nullable time: a Timestamp or null.
		&gen.Field{Name: "archived_at", Type: &field.TypeInfo{Type: field.TypeTime}, Optional: true, Nillable: true},
		// A hidden one: nowhere.
		&gen.Field{Name: "secret", Type: str, Annotations: gen.Annotations{"API": api.Hidden()}},
	)
	skeleton, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	nodes := slices.Clone(g.Nodes)
	nodes[slices.Index(nodes, base)] = &it
	out, err := build(skeleton, nodes)
	if err != nil {
		t.Fatal(err)
	}
	doc := decoded(t, out)
	schemas, params := section(doc, "schemas"), section(doc, "parameters")
	props := func(s string) map[string]any { return schemas[s].(map[string]any)["properties"].(map[string]any) }
	required := func(s string) []any { r, _ := schemas[s].(map[string]any)["required"].([]any); return r }

	for _, name := range []string{"color", "rank", "origin"} {
		if _, ok := props("Item")[name]; !ok {
			t.Errorf("Item lacks %s", name)
		}
		if _, ok := props("ItemUpdate")[name]; !ok {
			t.Errorf("ItemUpdate lacks %s", name)
		}
	}
	for _, s := range []string{"Item", "ItemCreate", "ItemUpdate"} {
		if _, ok := props(s)["secret"]; ok {
			t.Errorf("%s shows the hidden field", s)
		}
	}
	if !slices.Contains(required("Item"), "color") || !slices.Contains(required("Item"), "origin") {
		t.Errorf("Item requires %v: every key, origin (nullable) too", required("Item"))
	}
	if got := mustJSON(t, props("Item")["origin"]); got["type"] == nil || len(got["type"].([]any)) != 2 {
		t.Errorf("Item.origin = %v, want a nullable string", got)
	}
	if got, _ := json.Marshal(props("Item")["archived_at"]); string(got) != `{"anyOf":[{"$ref":"#/components/schemas/Timestamp"},{"type":"null"}]}` {
		t.Errorf("Item.archived_at = %s, want a Timestamp or null", got)
	}
	if _, ok := props("ItemCreate")["color"]; !ok || !slices.Contains(required("ItemCreate"), "color") {
		t.Error("ItemCreate does not require color")
	}
	if slices.Contains(required("ItemCreate"), "rank") {
		t.Error("ItemCreate requires rank, which has a default")
	}
	if _, ok := props("ItemCreate")["origin"]; ok {
		t.Error("ItemCreate takes the immutable origin")
	}
	sort := mustJSON(t, params["sort"])["schema"].(map[string]any)["enum"].([]any)
	if !slices.Contains(sort, "rank") || slices.Contains(sort, "color") || slices.Contains(sort, "status") {
		t.Errorf("sort enum = %v: rank in, color and status (api.NoSort) out", sort)
	}
	if _, ok := params["rank"]; !ok {
		t.Error("no rank parameter")
	}
	op := findOperation(mustObject(t, out), "listItems")
	listed, _ := json.Marshal(mustJSON(t, op)["parameters"])
	if !bytes.Contains(listed, []byte(`"#/components/parameters/rank"`)) {
		t.Errorf("listItems does not take rank: %s", listed)
	}
}

func mustObject(t *testing.T, data []byte) *object {
	t.Helper()
	v, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*object)
}

// mustJSON turns a generated value into plain JSON values.
func mustJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, data)
}

// TestResourceShapes: what the annotations of ent/schema make of the
// resources other than Item, as clients rely on it: the secret only in the
// variant with it, renamed and hidden fields, edges, references, the
// request bodies' fields and the list parameters' names.
func TestResourceShapes(t *testing.T) {
	g, _ := item(t)
	c, err := generate(g.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	schema := func(name string) map[string]any {
		s, ok := c.schemas.get(name)
		if !ok {
			t.Fatalf("no schema %s", name)
		}
		return mustJSON(t, s)
	}
	props := func(name string) map[string]any { return schema(name)["properties"].(map[string]any) }
	at := func(v map[string]any, path ...string) any {
		var cur any = v
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		return cur
	}
	for _, tc := range []struct {
		name   string
		got    any
		want   any
		reason string
	}{
		{"APIKey has no key", props("APIKey")["key"], nil, "api.Once: the secret is shown once"},
		{"APIKeyWithSecret's key", at(props("APIKeyWithSecret"), "key", "pattern"), "^sk_", "api.Rename, api.Pattern"},
		{"APIKey has no key_hash", props("APIKeyWithSecret")["key_hash"], nil, "Sensitive, renamed"},
		{"APIKey has no updated_at", props("APIKey")["updated_at"], nil, "api.Field(updated_at, api.Hidden())"},
		{"APIKey.scopes", at(props("APIKey"), "scopes", "items", "$ref"), "#/components/schemas/KeyScope", "api.Enum on field.Strings"},
		{"APIKey.scopes unique", at(props("APIKey"), "scopes", "uniqueItems"), true, "api.Unique"},
		{"APIKeyCreate.scopes not unique", at(props("APIKeyCreate"), "scopes", "uniqueItems"), nil, "the server drops duplicates"},
		{"APIKeyCreate requires nothing", schema("APIKeyCreate")["required"], nil, "api.Optional on user_id, defaults"},
		{"APIKeyCreate has no rate limit", props("APIKeyCreate")["rate_limit_per_minute"], nil, "api.NoCreate"},
		{"APIKeyUpdate.rate_limit_per_minute null", at(props("APIKeyUpdate"), "rate_limit_per_minute", "type"), []any{"integer", "null"}, "Nillable"},
		{"APIKeyCreate.expires_at not null", at(props("APIKeyCreate"), "expires_at", "$ref"), "#/components/schemas/Timestamp", "create takes no null"},
		{"Webhook has no secret", props("Webhook")["secret"], nil, "api.Once"},
		{"Webhook has no previous_secret", props("WebhookWithSecret")["previous_secret"], nil, "Sensitive"},
		{"WebhookWithSecret's secret", at(props("WebhookWithSecret"), "secret", "pattern"), "^whsec_", "api.Pattern"},
		{"Webhook.url", at(props("Webhook"), "url", "format"), "uri", "api.Format"},
		{"WebhookCreate.url required", schema("WebhookCreate")["required"], []any{"url"}, "no default"},
		{"Delivery.webhook_id", at(props("Delivery"), "webhook_id", "pattern"), "^whk_", "api.Rename keeps the edge's prefix"},
		{"Delivery.event", at(props("Delivery"), "event", "$ref"), "#/components/schemas/WebhookEvent", "api.Of(type) on the event edge"},
		{"Delivery.attempt_log", at(props("Delivery"), "attempt_log", "items", "$ref"), "#/components/schemas/DeliveryAttempt", "an annotated edge"},
		{"Delivery.attempt_log bound", at(props("Delivery"), "attempt_log", "maxItems"), float64(20), "api.Length on an edge"},
		{"Delivery.next_attempt_at null", at(props("Delivery"), "next_attempt_at", "anyOf"), []any{
			map[string]any{"$ref": "#/components/schemas/Timestamp"}, map[string]any{"type": "null"}}, "api.Nullable"},
		{"Delivery has no claimed_until", props("Delivery")["claimed_until"], nil, "api.Hidden"},
		{"DeliveryAttempt has no id", props("DeliveryAttempt")["id"], nil, "api.Field(id, api.Hidden())"},
		{"DeliveryAttempt.at", at(props("DeliveryAttempt"), "at", "$ref"), "#/components/schemas/Timestamp", "created_at renamed"},
		{"Event.data", at(props("Event"), "data", "$ref"), "#/components/schemas/Item", "api.Ref"},
		{"Event.event", at(props("Event"), "event", "$ref"), "#/components/schemas/WebhookEvent", "type renamed, api.Enum"},
		{"AuditEvent.timestamp", at(props("AuditEvent"), "timestamp", "$ref"), "#/components/schemas/Timestamp", "created_at renamed"},
		{"AuditEvent.changes", at(props("AuditEvent"), "changes", "additionalProperties", "maxItems"), float64(2), "api.Schema"},
		{"no DeliveryCreate", c.schemas.obj("DeliveryCreate") == nil, true, "api.ReadOnly"},
		{"no users sort", c.parameters.obj("user_sort") == nil, true, "api.NoSort on the type"},
		{"event_type's name", at(mustJSON(t, c.parameters.obj("event_type")), "name"), "type", "api.FilterList's param"},
		{"key_user_id's name", at(mustJSON(t, c.parameters.obj("key_user_id")), "name"), "user_id", "api.List's prefix"},
	} {
		got, _ := json.Marshal(tc.got)
		want, _ := json.Marshal(tc.want)
		if !bytes.Equal(got, want) {
			t.Errorf("%s = %s, want %s (%s)", tc.name, got, want, tc.reason)
		}
	}
}
