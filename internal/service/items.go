package service

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/item"
	"github.com/acme/itemsvc/ent/schema/pulid"
	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/resource"
)

// ItemPage is one page of a list and the count of all matching items.
type ItemPage struct {
	Items []*ent.Item
	Total int
	// Next is where the following page starts; nil on the last page.
	Next *ItemCursor
}

// ListItems returns one page of the items the viewer may see: at an offset
// (p.Page), or after a cursor (p.After), with the cursor of the next page.
func (s *Service) ListItems(ctx context.Context, p ListParams) (ItemPage, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return ItemPage{}, err
	}
	if p.UserID != "" && p.UserID != v.UserID && !v.Admin() {
		return ItemPage{}, apperr.PermissionDenied("only admins may list another user's items")
	}
	total, err := s.CountItems(ctx, p.UserID, p.Status)
	if err != nil {
		return ItemPage{}, err
	}
	page := ItemPage{Total: total, Items: []*ent.Item{}}
	offset := (p.Page - 1) * p.Limit
	if offset >= total {
		return page, nil
	}
	q := s.db.Item.Query()
	if p.Status != "" {
		q.Where(item.StatusEQ(item.Status(p.Status)))
	}
	if p.UserID != "" {
		q.Where(item.UserID(p.UserID))
	}
	if p.After != nil {
		q.Where(p.After.after())
	} else if offset > 0 {
		q.Offset(offset)
	}
	// One row more than the page tells whether another page follows,
	// whatever happened to the total since it was read.
	page.Items, err = q.Order(p.order()...).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return ItemPage{}, fmt.Errorf("list items: %w", err)
	}
	if len(page.Items) > p.Limit {
		page.Items = page.Items[:p.Limit]
		next := p.cursorAfter(page.Items[p.Limit-1])
		page.Next = &next
	}
	return page, nil
}

// GetItem returns an item the viewer may see.
func (s *Service) GetItem(ctx context.Context, id string) (*ent.Item, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	if !pulid.Valid("item_", id) {
		return nil, apperr.NotFound("item")
	}
	it, err := s.db.Item.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, s.missingItem(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get item: %w", err)
	}
	return it, nil
}

// CreateItem creates an item owned by the viewer.
func (s *Service) CreateItem(ctx context.Context, in ent.CreateItemInput) (*ent.Item, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := normalizeItem(&in.Name, in.Description, in.Status); err != nil {
		return nil, err
	}
	var it *ent.Item
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		c := tx.Item.Create().SetInput(in).SetUserID(v.UserID)
		if err := checkStrings(c.Mutation()); err != nil {
			return err
		}
		it, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create item: %w", err)
	}
	return detach(ctx, it), nil
}

// UpdateItem changes the fields present in the input. A change that leaves
// every field as it was is no change: updated_at and the version stay and no
// event is sent.
func (s *Service) UpdateItem(ctx context.Context, id string, in ent.UpdateItemInput) (*ent.Item, error) {
	return s.UpdateItemIfMatch(ctx, id, in, Precondition{})
}

// UpdateItemIfMatch is UpdateItem on the condition that the item is still
// one that pre names: otherwise nothing changes and the error is
// PRECONDITION_FAILED. An admin's change of another user's item is
// administration, audited (item.updated); a user's of their own is not. The update is written only where the version is the
// one checked, so of two changes conditioned on the same ETag one wins and
// the other fails, however they interleave.
func (s *Service) UpdateItemIfMatch(ctx context.Context, id string, in ent.UpdateItemInput, pre Precondition) (*ent.Item, error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := normalizeItem(in.Name, in.Description, in.Status); err != nil {
		return nil, err
	}
	if !pulid.Valid("item_", id) {
		return nil, apperr.NotFound("item")
	}
	var it *ent.Item
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		cur, err := itemForChange(ctx, tx, id, v.Admin())
		if err != nil {
			return err
		}
		if err := pre.check(cur); err != nil {
			return err
		}
		u := tx.Item.UpdateOne(cur).SetInput(in)
		if err := checkStrings(u.Mutation()); err != nil {
			return err
		}
		changes, err := changed(ctx, u.Mutation())
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			it = cur
			return nil
		}
		if pre.set() {
			u.Where(item.Version(cur.Version))
		}
		it, err = u.Save(ctx)
		if ent.IsNotFound(err) && pre.set() {
			return pre.raced(ctx, tx, id, err)
		}
		if err != nil || cur.UserID == v.UserID {
			return err
		}
		return s.recordAudit(ctx, tx, AuditItemUpdated, it.ID, changes)
	})
	if ent.IsNotFound(err) {
		return nil, s.missingItem(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("update item: %w", err)
	}
	return detach(ctx, it), nil
}

// DeleteItem deletes an item; its item.deleted event carries it as it was.
func (s *Service) DeleteItem(ctx context.Context, id string) error {
	return s.DeleteItemIfMatch(ctx, id, Precondition{})
}

// DeleteItemIfMatch is DeleteItem on the condition that the item is still
// one that pre names, checked as UpdateItemIfMatch checks it: otherwise the
// item stays and the error is PRECONDITION_FAILED. An admin's deletion of
// another user's item is audited (item.deleted), as UpdateItemIfMatch's
// change is.
func (s *Service) DeleteItemIfMatch(ctx context.Context, id string, pre Precondition) error {
	v, err := requireViewer(ctx)
	if err != nil {
		return err
	}
	if !pulid.Valid("item_", id) {
		return apperr.NotFound("item")
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		// Only an admin reaches another user's item (privacy), and that
		// deletion is audited with the item as it was: for an admin the
		// item is read first.
		if !pre.set() && !v.Admin() {
			return tx.Item.DeleteOneID(id).Exec(ctx)
		}
		cur, err := itemForChange(ctx, tx, id, v.Admin())
		if err != nil {
			return err
		}
		if err := pre.check(cur); err != nil {
			return err
		}
		err = tx.Item.DeleteOneID(id).Where(item.Version(cur.Version)).Exec(ctx)
		if ent.IsNotFound(err) && pre.set() {
			return pre.raced(ctx, tx, id, err)
		}
		if err != nil || cur.UserID == v.UserID {
			return err
		}
		return s.recordAudit(ctx, tx, AuditItemDeleted, cur.ID, removed(resource.NewItem(cur)))
	})
	if ent.IsNotFound(err) {
		return s.missingItem(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("delete item: %w", err)
	}
	return nil
}

// itemForChange reads the item id in tx before a change. An admin may
// change another user's item, and that change is audited with the values
// it replaced: for them (lock) the row is locked on PostgreSQL until the
// transaction ends, so that no concurrent change slips in between the read
// and the write (SQLite has one writer at a time).
func itemForChange(ctx context.Context, tx *ent.Tx, id string, lock bool) (*ent.Item, error) {
	if !lock {
		return tx.Item.Get(ctx, id)
	}
	return tx.Item.Query().Where(item.ID(id)).
		Modify(func(s *sql.Selector) {
			if s.Dialect() == dialect.Postgres {
				s.ForUpdate()
			}
		}).
		Only(ctx)
}

// missingItem explains why the viewer could not reach an item: privacy hid
// it because it is another user's (PERMISSION_DENIED), or it does not exist
// (NOT_FOUND). Only failures pay for this second look.
func (s *Service) missingItem(ctx context.Context, id string) error {
	why, err := s.Unreachable(ctx, []string{id})
	if err != nil {
		return err
	}
	return why[id]
}

// Unreachable explains, for each of ids that a read for the viewer did not
// return, why: PERMISSION_DENIED for an item or user that exists but is
// hidden from the viewer by privacy (another user's, as REST's 403 says),
// NOT_FOUND for anything else. It is one query per type, and only failures
// pay for it.
func (s *Service) Unreachable(ctx context.Context, ids []string) (map[string]*apperr.Error, error) {
	var items, users []string
	for _, id := range ids {
		switch {
		case pulid.Valid("item_", id):
			items = append(items, id)
		case pulid.Valid("user_", id):
			users = append(users, id)
		}
	}
	var found []string
	if len(items) > 0 {
		ids, err := s.db.Item.Query().Where(item.IDIn(items...)).IDs(system(ctx))
		if err != nil {
			return nil, fmt.Errorf("check items: %w", err)
		}
		found = append(found, ids...)
	}
	if len(users) > 0 {
		ids, err := s.db.User.Query().Where(user.IDIn(users...)).IDs(system(ctx))
		if err != nil {
			return nil, fmt.Errorf("check users: %w", err)
		}
		found = append(found, ids...)
	}
	existing := make(map[string]bool, len(found))
	for _, id := range found {
		existing[id] = true
	}
	why := make(map[string]*apperr.Error, len(ids))
	for _, id := range ids {
		switch {
		case existing[id] && strings.HasPrefix(id, "item_"):
			why[id] = apperr.PermissionDenied("the item belongs to another user")
		case existing[id]:
			why[id] = apperr.PermissionDenied("the user is not you")
		case strings.HasPrefix(id, "user_"):
			why[id] = apperr.NotFound("user")
		case strings.HasPrefix(id, "item_"):
			why[id] = apperr.NotFound("item")
		default:
			why[id] = apperr.NotFound("node")
		}
	}
	return why, nil
}
