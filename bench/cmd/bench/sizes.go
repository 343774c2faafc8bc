package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// The sizes row: whether a list's first page costs what it costs whatever
// the size of the owner's list. Its owner of many items is seeded with the
// others (seedSizes), and its figure is the latency of one request at a
// time, the two owners in turns, so that both meet the same background
// load.
const (
	sizesItems    = 20000 // items of the row's big owner
	sizesRequests = 2000  // measured requests per owner
	sizesWarmup   = 200   // unmeasured requests per owner first
	sizesMaxRatio = 1.1   // target: the big owner's p50 over the small one's
)

// sizesUser is the sizes row's owner of sizesItems items.
type sizesUser struct {
	key, token string
}

// seedSizes adds the sizes row's big owner, with its items and their
// counters, before any server starts.
func seedSizes(ctx context.Context, db *database, runServer func(args ...string) (string, error), fx *fixture) error {
	key, err := runServer("keys", "create", "--email", "sizes@example.com", "--name", "Sizes User")
	if err != nil {
		return err
	}
	conn, err := db.open()
	if err != nil {
		return err
	}
	defer conn.Close()
	var id string
	if err := conn.QueryRowContext(ctx, "SELECT id FROM users WHERE email = 'sizes@example.com'").Scan(&id); err != nil {
		return fmt.Errorf("read the sizes user: %w", err)
	}
	if err := insertItems(ctx, conn, db.dialect, []string{id}, sizesItems, "Sizes item %05d", func(int, string) {}); err != nil {
		return err
	}
	fx.sizes = &sizesUser{key: key}
	return nil
}

// sizesResult is the sizes row: each owner's item count and p50, p90.
type sizesResult struct {
	SmallItems, BigItems int
	Small, Big           [2]time.Duration // p50, p90
	Errors               int
}

func (r sizesResult) ratio() float64 { return float64(r.Big[0]) / float64(r.Small[0]) }

// line describes the row with its verdict.
func (r sizesResult) line() string {
	v := verdict(r.ratio() <= sizesMaxRatio && r.Errors == 0)
	return fmt.Sprintf("sizes: GET /v1/items?limit=20 (first page and its total), one request at a time, owners in turns: "+
		"%d items p50 %s ms p90 %s ms; %d items p50 %s ms p90 %s ms; p50 ratio %.3f (target ≤ %.1f: %s); errors %d",
		r.SmallItems, ms(r.Small[0]), ms(r.Small[1]), r.BigItems, ms(r.Big[0]), ms(r.Big[1]), r.ratio(), sizesMaxRatio, v, r.Errors)
}

// measureSizes times the first page of the first seeded user (items/users
// items) and of the sizes user, in turns, and checks each response's total.
func measureSizes(ctx context.Context, base string, fx *fixture) (sizesResult, error) {
	if fx.sizes == nil {
		return sizesResult{}, fmt.Errorf("the sizes user was not seeded")
	}
	tok, err := loginKey(ctx, base, fx.sizes.key)
	if err != nil {
		return sizesResult{}, err
	}
	fx.sizes.token = tok
	client := &http.Client{Timeout: 10 * time.Second}
	owners := []struct {
		token string
		want  int
		lat   []time.Duration
	}{{token: fx.tokens[0], want: len(fx.items[0])}, {token: tok, want: sizesItems}}
	res := sizesResult{SmallItems: owners[0].want, BigItems: owners[1].want}
	for i := range sizesWarmup + sizesRequests {
		for j := range owners {
			o := &owners[j]
			d, total, err := firstPage(ctx, client, base, o.token)
			if err != nil || total != o.want {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				res.Errors++
				continue
			}
			if i >= sizesWarmup {
				o.lat = append(o.lat, d)
			}
		}
	}
	if len(owners[0].lat) == 0 || len(owners[1].lat) == 0 {
		return res, fmt.Errorf("no request succeeded (%d errors)", res.Errors)
	}
	res.Small, res.Big = quantiles(owners[0].lat), quantiles(owners[1].lat)
	return res, nil
}

// firstPage requests one first page and returns its latency and the total
// it reports.
func firstPage(ctx context.Context, client *http.Client, base, token string) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/items?limit=20", nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(t0)
	if err != nil || res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d: %v", res.StatusCode, err)
	}
	var env struct {
		Meta struct {
			Pagination struct {
				Total int `json:"total"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return 0, 0, err
	}
	return d, env.Meta.Pagination.Total, nil
}

// quantiles are the p50 and p90 of ds.
func quantiles(ds []time.Duration) [2]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return [2]time.Duration{s[len(s)/2], s[len(s)*9/10]}
}
