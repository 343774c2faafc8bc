package migration

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// revisionsTable records the applied migrations, one JSON-encoded revision
// per version, in the form Atlas's executor wrote them.
const revisionsTable = "schema_revisions"

// revisionTypeExecute is Atlas's type of a revision applied by running its
// file.
const revisionTypeExecute = 2

// revision is one applied migration as kept in the table.
type revision struct {
	Version         string
	Description     string
	Type            uint
	Applied         int
	Total           int
	ExecutedAt      time.Time
	ExecutionTime   time.Duration
	Error           string
	ErrorStmt       string
	Hash            string
	PartialHashes   []string
	OperatorVersion string
}

// revisions is the history of applied migrations, kept in the database it
// describes.
type revisions struct {
	conn    *sql.Conn
	dialect string
}

func (r *revisions) init(ctx context.Context) error {
	_, err := r.conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+revisionsTable+
		` (version VARCHAR(255) PRIMARY KEY, revision TEXT NOT NULL)`)
	if err != nil {
		return fmt.Errorf("create %s: %w", revisionsTable, err)
	}
	return nil
}

// placeholder returns the n-th bind parameter of the dialect.
func (r *revisions) placeholder(n int) string {
	if r.dialect == "postgres" {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// read returns every applied revision in version order.
func (r *revisions) read(ctx context.Context) ([]*revision, error) {
	rows, err := r.conn.QueryContext(ctx, `SELECT revision FROM `+revisionsTable+` ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read revisions: %w", err)
	}
	defer rows.Close()
	var out []*revision
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var rev revision
		if err := json.Unmarshal([]byte(raw), &rev); err != nil {
			return nil, fmt.Errorf("decode revision: %w", err)
		}
		out = append(out, &rev)
	}
	return out, rows.Err()
}

// write records a revision in the transaction that applied it.
func (r *revisions) write(ctx context.Context, tx *sql.Tx, rev *revision) error {
	raw, err := json.Marshal(rev)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+revisionsTable+` WHERE version = `+r.placeholder(1), rev.Version); err != nil {
		return fmt.Errorf("write revision %s: %w", rev.Version, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+revisionsTable+` (version, revision) VALUES (`+
		r.placeholder(1)+`, `+r.placeholder(2)+`)`, rev.Version, string(raw))
	if err != nil {
		return fmt.Errorf("write revision %s: %w", rev.Version, err)
	}
	return nil
}
