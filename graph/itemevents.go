package graph

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/graph/model"
	"github.com/acme/itemsvc/internal/events"
	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// Stream is what the itemEvents resolver shares with the transport that
// carries its subscription (graph/server, over graphql-ws or Server-Sent
// Events): the token the stream was opened with, which the service checks
// again while the stream lives, and why the stream ended, which the
// transport sends as its last result before completing it. The server
// gives every subscription one (WithStream).
type Stream struct {
	// Token is the bearer token the subscription was opened with
	// (graphql-ws: connection_init's; SSE: the request's), or "".
	Token string

	mu  sync.Mutex
	err error
}

type streamKey struct{}

// WithStream returns ctx carrying s for the resolver of the subscription
// that runs under it.
func WithStream(ctx context.Context, s *Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

// streamFrom is the Stream of ctx, or nil.
func streamFrom(ctx context.Context) *Stream {
	s, _ := ctx.Value(streamKey{}).(*Stream)
	return s
}

// Err is the error the stream ended with, or nil while it runs or when it
// ended because its client left.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// token is s.Token; "" without a Stream.
func (s *Stream) token() string {
	if s == nil {
		return ""
	}
	return s.Token
}

// end records why the stream ended, for Err.
func (s *Stream) end(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// itemEventTypes maps the schema's enum to the outbox's types.
var itemEventTypes = map[model.ItemEventType]string{
	model.ItemEventTypeCreated: "item.created",
	model.ItemEventTypeUpdated: "item.updated",
	model.ItemEventTypeDeleted: "item.deleted",
}

// subscribeItemEvents opens the service's stream and feeds the channel
// gqlgen reads, leaving the reason it ends in the subscription's Stream.
func subscribeItemEvents(ctx context.Context, svc *service.Service, types []model.ItemEventType, after *string) (<-chan *model.ItemEvent, error) {
	stream := streamFrom(ctx)
	p := service.StreamParams{Token: stream.token()}
	for _, t := range types {
		p.Types = append(p.Types, itemEventTypes[t])
	}
	if after != nil {
		p.After = *after
	}
	st, err := svc.SubscribeEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	withOwner := selectsOwner(ctx)
	ch := make(chan *model.ItemEvent)
	go func() {
		defer close(ch)
		defer st.Close()
		for {
			ev, err := st.Next(ctx)
			if err == nil {
				var out *model.ItemEvent
				if out, err = itemEvent(ev); err == nil && withOwner {
					err = loadOwner(ctx, svc, out.Item)
				}
				if err == nil {
					select {
					case ch <- out:
						continue
					case <-ctx.Done():
						return
					}
				}
			}
			if ctx.Err() == nil {
				stream.end(err)
			}
			return
		}
	}()
	return ch, nil
}

// selectsOwner tells whether the itemEvents field of ctx selects
// item { owner }: the event's item is rebuilt from the event, without the
// ent client its edges are read through, so its owner is loaded with it.
func selectsOwner(ctx context.Context) bool {
	return selects(ctx, step{"item", "ItemEvent"}, step{"owner", "Item"})
}

// step is a field of a path in a selection, and the type it is a field of.
type step struct{ field, typ string }

// selects tells whether the field of ctx selects the path of fields given,
// under any alias and through fragments.
func selects(ctx context.Context, path ...step) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return false
	}
	opCtx := graphql.GetOperationContext(ctx)
	var walk func(set ast.SelectionSet, path []step) bool
	walk = func(set ast.SelectionSet, path []step) bool {
		if len(path) == 0 {
			return true
		}
		for _, f := range graphql.CollectFields(opCtx, set, []string{path[0].typ}) {
			if f.Name == path[0].field && walk(f.Selections, path[1:]) {
				return true
			}
		}
		return false
	}
	return walk(fc.Field.Selections, path)
}

// loadOwner sets it's owner edge, read as the viewer, under the User
// privacy that item(id){owner} reads it with (a user sees themselves, an
// admin everyone).
func loadOwner(ctx context.Context, svc *service.Service, it *ent.Item) error {
	return loadOwners(ctx, svc, []*ent.Item{it})
}

// loadOwners is loadOwner for the items of a page of events, in one query.
func loadOwners(ctx context.Context, svc *service.Service, items []*ent.Item) error {
	if len(items) == 0 {
		return nil
	}
	client, err := svc.Reader(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, it := range items {
		if !slices.Contains(ids, it.UserID) {
			ids = append(ids, it.UserID)
		}
	}
	users, err := client.User.Query().Where(user.IDIn(ids...)).All(ctx)
	if err != nil {
		return fmt.Errorf("event item owners: %w", err)
	}
	for _, it := range items {
		i := slices.IndexFunc(users, func(u *ent.User) bool { return u.ID == it.UserID })
		if i < 0 {
			// The viewer sees only their own items' events (an admin all),
			// so the owner is always visible; should it not be, the field
			// fails (the edge cannot be marked loaded-and-empty).
			return fmt.Errorf("event item owner %s: %w", it.UserID, &ent.NotFoundError{})
		}
		it.Edges.Owner = users[i]
	}
	return nil
}

// itemEvent renders an event for GraphQL: the item as the change left it
// is in the event (an item.deleted one no longer exists).
func itemEvent(ev events.Event) (*model.ItemEvent, error) {
	it, err := resource.DecodeItem(ev.Item)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	var typ model.ItemEventType
	for k, v := range itemEventTypes {
		if v == ev.Type {
			typ = k
		}
	}
	return &model.ItemEvent{
		ID:        ev.ID,
		Type:      typ,
		Item:      it,
		Timestamp: ev.Timestamp.UTC(),
	}, nil
}
