package graph_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/ent/delivery"
	"github.com/acme/itemsvc/ent/event"
	"github.com/acme/itemsvc/ent/privacy"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/viewer"
	"github.com/acme/itemsvc/third_party/entgql"
)

// publicDNS resolves the receivers' names of these tests: hooks.example.com
// to a public address, intranet.example.com to a private one. Nothing dials
// them (no dispatcher runs).
func publicDNS(_ context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case "hooks.example.com":
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case "intranet.example.com":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// camel is a REST field's name in GraphQL: user_id is userID,
// last_duration_ms is lastDurationMs.
func camel(name string) string {
	parts := strings.Split(name, "_")
	for i, p := range parts[1:] {
		if p == "id" {
			parts[i+1] = "ID"
		} else {
			parts[i+1] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// restEventFields are the fields of an event whose GraphQL name is not the
// REST one in GraphQL's case (ItemEvent predates the events page).
var restEventFields = map[string]string{"event": "type", "data": "item"}

// selection selects, in GraphQL, every field that REST renders of the
// resource type t: its JSON names in GraphQL's case, nested resources
// likewise. Derived from the type REST renders, so that a field added to
// it fails these tests until GraphQL has it too.
func selection(t reflect.Type) string {
	var out []string
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		elem := f.Type
		for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
			elem = elem.Elem()
		}
		field := camel(name)
		if elem.Kind() == reflect.Struct && elem != reflect.TypeFor[time.Time]() {
			field += " { " + selection(elem) + " }"
		}
		out = append(out, field)
	}
	return strings.Join(out, " ")
}

// fragments are the fragments the scenario queries spread: a resource as
// REST renders it, and an event with its item.
var fragments = map[string]string{
	"W": "fragment W on Webhook { " + selection(reflect.TypeFor[resource.Webhook]()) + " }",
	"D": "fragment D on Delivery { " + selection(reflect.TypeFor[resource.Delivery]()) + " }",
	"R": "fragment R on DeliveryRecovery { " + selection(reflect.TypeFor[resource.Recovery]()) + " }",
	"E": "fragment E on ItemEvent { id type timestamp item { " + selection(reflect.TypeFor[resource.Item]()) + " } }",
}

// withFragments appends the fragments query spreads.
func withFragments(query string) string {
	for name, f := range fragments {
		if strings.Contains(query, "..."+name+" ") || strings.HasSuffix(query, "..."+name) {
			query += " " + f
		}
	}
	return query
}

// asGraphQL rewrites a value REST returned as GraphQL spells it, guided by
// typ, the GraphQL type of the field that holds it: names in GraphQL's case,
// enum values in upper case (active is ACTIVE, item.created is CREATED). A
// REST field without a GraphQL twin fails the test.
func asGraphQL(t *testing.T, schema *ast.Schema, typ *ast.Type, v any) any {
	t.Helper()
	def := schema.Types[typ.Name()]
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range v {
			name := camel(k)
			if def.Name == "ItemEvent" && restEventFields[k] != "" {
				name = restEventFields[k]
			}
			f := def.Fields.ForName(name)
			if f == nil {
				t.Errorf("REST's %s has no twin in GraphQL's %s (%s)", k, def.Name, name)
				continue
			}
			out[name] = asGraphQL(t, schema, f.Type, val)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = asGraphQL(t, schema, typ.Elem, e)
		}
		return out
	case string:
		if def.Kind == ast.Enum {
			return strings.ToUpper(strings.TrimPrefix(v, "item."))
		}
	}
	return v
}

// sameData compares REST's value, rewritten as GraphQL spells it, with
// GraphQL's. Fields named in differ are those of two different objects
// (the twins a change is made to, one per API): their values are not
// compared, only whether both are null. A GraphQL field that REST leaves
// out must be null (a webhook's secret).
func sameData(t *testing.T, rest, graph any, differ map[string]bool) {
	t.Helper()
	switch r := rest.(type) {
	case map[string]any:
		g, ok := graph.(map[string]any)
		if !ok {
			t.Errorf("REST %v, GraphQL %v", rest, graph)
			return
		}
		for k, rv := range r {
			if differ[k] {
				if (rv == nil) != (g[k] == nil) {
					t.Errorf("%s: REST %v, GraphQL %v (one is null)", k, rv, g[k])
				}
				continue
			}
			sameData(t, rv, g[k], differ)
		}
		for k, gv := range g {
			if _, ok := r[k]; !ok && gv != nil {
				t.Errorf("%s: GraphQL %v, absent on REST", k, gv)
			}
		}
	case []any:
		g, ok := graph.([]any)
		if !ok || len(g) != len(r) {
			t.Errorf("REST %v, GraphQL %v", rest, graph)
			return
		}
		for i := range r {
			sameData(t, r[i], g[i], differ)
		}
	default:
		if !reflect.DeepEqual(rest, graph) {
			t.Errorf("REST %v, GraphQL %v", rest, graph)
		}
	}
}

// twinsDiffer are the fields that tell apart two objects made alike, one
// through each API: ids (a twin delivery's event is a twin too), times of
// creation and change, secrets.
var twinsDiffer = map[string]bool{
	"id": true, "webhookID": true, "eventID": true, "createdAt": true, "updatedAt": true, "secret": true,
	"previousSecretExpiresAt": true, "nextAttemptAt": true, "at": true,
}

// parityEnv is a server with Alice's, Bob's and the admin's webhooks and
// deliveries, for the scenario tables.
type parityEnv struct {
	*testutil.Env
	t *testing.T
}

func newParityEnv(t *testing.T) parityEnv {
	env := testutil.New(t, testutil.WithConfig(func(c *config.Config) {
		c.RateLimitPerMinute = 100_000
		c.RateLimitPerHour = 100_000
	}), testutil.WithAppOptions(func(o *app.Options) { o.Webhooks.Lookup = publicDNS }))
	return parityEnv{Env: env, t: t}
}

// as is a service context of an actor.
func (e parityEnv) as(a testutil.Actor) context.Context {
	role := viewer.RoleUser
	if a == e.Admin {
		role = viewer.RoleAdmin
	}
	return viewer.NewContext(context.Background(), viewer.Viewer{UserID: a.UserID, KeyID: a.KeyID, Role: role})
}

// hook registers a webhook of a's through the service; active false
// pauses it.
func (e parityEnv) hook(a testutil.Actor, path string, active bool) string {
	e.t.Helper()
	u := "https://hooks.example.com/" + path
	ep, err := e.App.Service.CreateWebhook(e.as(a), service.WebhookInput{URL: &u, Active: &active})
	if err != nil {
		e.t.Fatalf("create webhook: %v", err)
	}
	return ep.ID
}

// eventOf makes an item change of a's and returns its event's id.
func (e parityEnv) eventOf(a testutil.Actor) string {
	e.t.Helper()
	id := e.CreateItem(a, "changed")
	ev, err := e.App.DB.Client.Event.Query().Where(event.ItemID(id)).Only(privacy.DecisionContext(context.Background(), privacy.Allow))
	if err != nil {
		e.t.Fatalf("event of %s: %v", id, err)
	}
	return ev.ID
}

// delivery records a delivery of an event to a webhook as the dispatcher
// leaves one: in state, after n attempts that the receiver answered 503.
func (e parityEnv) delivery(webhook, evt string, state delivery.State, n int) string {
	e.t.Helper()
	ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
	c := e.App.DB.Client
	d := c.Delivery.Create().SetEndpointID(webhook).SetEventID(evt).SetState(state).SetAttempts(n).
		SetNextAttemptAt(time.Now().UTC().Truncate(time.Microsecond))
	if n > 0 {
		d.SetLastStatusCode(503).SetLastError("the receiver answered 503").SetLastDurationMs(12)
	}
	row, err := d.Save(ctx)
	if err != nil {
		e.t.Fatalf("delivery: %v", err)
	}
	for i := 1; i <= n; i++ {
		if err := c.DeliveryAttempt.Create().SetDeliveryID(row.ID).SetNumber(i).SetStatusCode(503).
			SetError("the receiver answered 503").SetDurationMs(10 + i).Exec(ctx); err != nil {
			e.t.Fatalf("attempt: %v", err)
		}
	}
	return row.ID
}

// failing is a webhook of a's with two failed deliveries of a's events
// (two attempts each) and one that succeeded; the first failed delivery's
// id comes with it.
func (e parityEnv) failing(a testutil.Actor, path string) (webhook, failed string) {
	e.t.Helper()
	webhook = e.hook(a, path, true)
	failed = e.delivery(webhook, e.eventOf(a), delivery.StateFailed, 2)
	e.delivery(webhook, e.eventOf(a), delivery.StateFailed, 2)
	e.delivery(webhook, e.eventOf(a), delivery.StateSucceeded, 1)
	return webhook, failed
}

// encodeCursor is the GraphQL cursor of an event id, as the events page
// issues it.
func encodeCursor(id string) string {
	var b strings.Builder
	entgql.Cursor[string]{ID: id}.MarshalGQL(&b)
	return strings.Trim(b.String(), `"`)
}

// parityCase is one request sent to both APIs: REST's route and GraphQL's
// twin field, and what both must answer.
type parityCase struct {
	name string
	as   testutil.Actor
	// ids makes the ids the request names: REST's path takes them as
	// {name}, GraphQL's query as variables $name. A request that changes
	// something (changes) is sent to twins, made by calling ids once for
	// each API; the two answers then differ in twinsDiffer only.
	ids     func() map[string]string
	changes bool

	method, path string // REST's
	body         any
	query        string         // GraphQL's, fragments spread by name (W, D, R, E)
	vars         map[string]any // besides the ids
	at           string         // where the answer is in GraphQL's data (dotted)

	status   int    // REST's status
	code     string // both APIs' code; "" on success
	field    string // both APIs' field of the error
	gqlField string // GraphQL's, where it names the argument otherwise
}

// run sends c to REST and to GraphQL and compares the answers: the same
// code and field, and on success the same data, field for field (REST's
// list of a page against the nodes of GraphQL's connection, and its total
// against totalCount).
func (c parityCase) run(t *testing.T, env *testutil.Env, schema *ast.Schema) {
	// The rows before this one made item changes; on PostgreSQL their
	// events join the feed once no older transaction can still commit, so
	// a page read before that and its twin read after would differ.
	env.WaitPublished()
	restIDs, gqlIDs := map[string]string{}, map[string]string{}
	if c.ids != nil {
		restIDs = c.ids()
		gqlIDs = restIDs
		if c.changes {
			gqlIDs = c.ids()
		}
	}
	path := c.path
	for k, v := range restIDs {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	res := env.Do(testutil.Request{Method: c.method, Path: path, Token: c.as.Token, Body: c.body})
	vars := map[string]any{}
	for k, v := range c.vars {
		vars[k] = v
	}
	for k, v := range gqlIDs {
		if strings.Contains(c.query, "$"+k) {
			vars[k] = v
		}
	}
	r := testutil.GQL(t, env, c.as.Token, withFragments(c.query), vars)

	if res.Status != c.status || res.ErrorCode() != c.code {
		t.Fatalf("REST %s %s: %d %s, want %d %s", c.method, path, res.Status, res.Body, c.status, c.code)
	}
	if c.code != "" {
		wantStatus := 200
		if c.status == 401 {
			wantStatus = 401 // refused before GraphQL runs, with REST's status
		}
		if r.Status != wantStatus || r.Code() != c.code {
			t.Fatalf("GraphQL: %d %s, want %d %s", r.Status, r.Raw, wantStatus, c.code)
		}
		var restErr struct {
			Error struct{ Details map[string]any } `json:"error"`
		}
		testutil.MustJSON(t, res.Body, &restErr)
		gqlField := c.gqlField
		if gqlField == "" {
			gqlField = c.field
		}
		if restErr.Error.Details["field"] != nilIfEmpty(c.field) || r.Errors[0].Extensions["field"] != nilIfEmpty(gqlField) {
			t.Errorf("field: REST %v, GraphQL %v, want %q and %q", restErr.Error.Details["field"], r.Errors[0].Extensions["field"], c.field, gqlField)
		}
		return
	}
	r.OK(t)

	var envelope struct {
		Data json.RawMessage `json:"data"`
		Meta struct {
			Pagination struct {
				Page, Pages, Total *float64
				NextCursor         *string `json:"next_cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	testutil.MustJSON(t, res.Body, &envelope)
	var restData any
	testutil.MustJSON(t, envelope.Data, &restData)
	keys := strings.Split(c.at, ".")
	var graphData any = r.Data
	for _, k := range keys {
		graphData = graphData.(map[string]any)[k]
	}
	typ := fieldType(schema, c.query, keys)
	var differ map[string]bool
	if c.changes {
		differ = twinsDiffer
	}
	switch def := schema.Types[typ.Name()]; {
	case def.Kind == ast.Scalar: // deleteWebhook's id
		if restData.(map[string]any)["id"] != restIDs["id"] || graphData != gqlIDs["id"] {
			t.Errorf("REST %v, GraphQL %v, want the ids %s and %s", restData, graphData, restIDs["id"], gqlIDs["id"])
		}
	case strings.HasSuffix(def.Name, "Connection"):
		conn := graphData.(map[string]any)
		nodes := []any{}
		for _, e := range conn["edges"].([]any) {
			nodes = append(nodes, e.(map[string]any)["node"])
		}
		node := schema.Types[def.Fields.ForName("edges").Type.Name()].Fields.ForName("node").Type
		sameData(t, asGraphQL(t, schema, &ast.Type{Elem: node}, restData), nodes, differ)
		pg := envelope.Meta.Pagination
		if total, ok := conn["totalCount"]; ok && (pg.Total == nil || total != *pg.Total) {
			t.Errorf("totalCount %v, REST's total %v", total, pg.Total)
		}
		more := pg.NextCursor != nil || (pg.Page != nil && pg.Pages != nil && *pg.Page < *pg.Pages)
		if info, ok := conn["pageInfo"].(map[string]any); !ok || info["hasNextPage"] != more {
			t.Errorf("pageInfo %v; REST's pagination says more: %v", conn["pageInfo"], more)
		}
		if len(nodes) == 0 && !strings.Contains(c.name, "none") {
			t.Errorf("an empty page proves little: %s", r.Raw)
		}
	default:
		sameData(t, asGraphQL(t, schema, typ, restData), graphData, differ)
	}
}

// nilIfEmpty is a field as the envelope carries it: absent when "".
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// fieldType is the GraphQL type at the path of field names keys, from the
// root type the query's operation runs on.
func fieldType(schema *ast.Schema, query string, keys []string) *ast.Type {
	def := schema.Query
	if strings.HasPrefix(strings.TrimSpace(query), "mutation") {
		def = schema.Mutation
	}
	var typ *ast.Type
	for _, k := range keys {
		typ = def.Fields.ForName(k).Type
		def = schema.Types[typ.Name()]
	}
	return typ
}
