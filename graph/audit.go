package graph

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/third_party/entgql"
)

// auditActionName is GraphQL's name of a stored action: upper case, the
// dot an underscore (webhook.secret_rotated is WEBHOOK_SECRET_ROTATED).
func auditActionName(a string) model.AuditAction {
	return model.AuditAction(strings.ToUpper(strings.ReplaceAll(a, ".", "_")))
}

// auditParams reads the arguments of auditEvents into the service's
// parameters; the service checks them as it checks REST's.
func auditParams(ctx context.Context, actorID *string, action *model.AuditAction, after *entgql.Cursor[string], first *int) (service.AuditParams, error) {
	pp, err := keysetPage(after, first, "aud_")
	if err != nil {
		return service.AuditParams{}, err
	}
	p := service.AuditParams{Limit: pp.Limit, After: pp.After, Count: selects(ctx, step{totalCountField, "AuditEventConnection"})}
	if actorID != nil {
		if err := service.CheckAuditActor(*actorID); err != nil {
			return p, err
		}
		p.ActorID = *actorID
	}
	if action != nil {
		for _, a := range service.AuditActions {
			if auditActionName(string(a)) == *action {
				p.Action = a
			}
		}
	}
	return p, nil
}

// auditChanges renders a record's changes as AuditChange, by field name;
// a JSON null is a null value.
func auditChanges(m map[string][2]json.RawMessage) []*model.AuditChange {
	out := make([]*model.AuditChange, 0, len(m))
	for field, pair := range m {
		c := &model.AuditChange{Field: field}
		c.Before, c.After = jsonText(pair[0]), jsonText(pair[1])
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// jsonText is a value's JSON text, nil for JSON null or nothing.
func jsonText(v json.RawMessage) *string {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	s := string(v)
	return &s
}
