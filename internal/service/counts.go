package service

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent/itemcount"
)

// CountItems returns how many items the viewer may see of one owner
// (userID, "" for every owner) in one status ("" for both), read from the
// counters the item hooks keep in the transaction of every change: the sum
// of one indexed range, at most two counters for one owner (each of up to 8
// slot rows on PostgreSQL), every user's for all, instead of counting items.
// Privacy holds the counters to the rows of the items they count, so a
// non-admin's count covers only their own items (another owner: 0).
func (s *Service) CountItems(ctx context.Context, userID, status string) (int, error) {
	if _, err := requireViewer(ctx); err != nil {
		return 0, err
	}
	q := s.db.ItemCount.Query()
	if userID != "" {
		q.Where(itemcount.UserID(userID))
	}
	if status != "" {
		q.Where(itemcount.Status(status))
	}
	total, err := q.Aggregate(sumOfCounts).Int(ctx)
	if err != nil {
		return 0, fmt.Errorf("count items: %w", err)
	}
	return total, nil
}

// sumOfCounts adds up the selected counters, 0 when there are none (as a
// bigint: PostgreSQL's SUM of bigints is a numeric).
func sumOfCounts(s *sql.Selector) string {
	return fmt.Sprintf("CAST(COALESCE(SUM(%s), 0) AS BIGINT)", s.C(itemcount.FieldCount))
}

// ItemCounts are the counters of the items a viewer may see, read at once,
// for answering the totals of many owners (the items connection of each
// user in a GraphQL result) with one query.
type ItemCounts map[string]map[string]int

// Total is the count of one owner's items in one status ("" for both).
func (c ItemCounts) Total(userID, status string) int {
	if status != "" {
		return c[userID][status]
	}
	n := 0
	for _, v := range c[userID] {
		n += v
	}
	return n
}

// ItemCounts reads every counter the viewer may see, adding up the slots of
// each: a user's own (at most two counters), or, for an admin, every user's.
func (s *Service) ItemCounts(ctx context.Context) (ItemCounts, error) {
	if _, err := requireViewer(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.ItemCount.Query().
		Select(itemcount.FieldUserID, itemcount.FieldStatus, itemcount.FieldCount).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read item counts: %w", err)
	}
	counts := ItemCounts{}
	for _, r := range rows {
		if counts[r.UserID] == nil {
			counts[r.UserID] = map[string]int{}
		}
		counts[r.UserID][r.Status] += r.Count
	}
	return counts, nil
}
