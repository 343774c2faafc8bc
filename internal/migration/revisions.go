package migration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"ariga.io/atlas/sql/migrate"
)

// revisionsTable records the applied migrations, one JSON-encoded Atlas
// revision per version.
const revisionsTable = "schema_revisions"

// revisions is Atlas's history of applied migrations, kept in the database it
// describes.
type revisions struct {
	conn    *sql.Conn
	dialect string
}

var _ migrate.RevisionReadWriter = (*revisions)(nil)

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

// Ident names the table, so that Atlas does not count it as user schema.
func (r *revisions) Ident() *migrate.TableIdent {
	return &migrate.TableIdent{Name: revisionsTable}
}

// ReadRevisions returns every applied revision in version order.
func (r *revisions) ReadRevisions(ctx context.Context) ([]*migrate.Revision, error) {
	rows, err := r.conn.QueryContext(ctx, `SELECT revision FROM `+revisionsTable+` ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read revisions: %w", err)
	}
	defer rows.Close()
	var out []*migrate.Revision
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		rev, err := decodeRevision(raw)
		if err != nil {
			return nil, fmt.Errorf("decode revision: %w", err)
		}
		out = append(out, rev)
	}
	return out, rows.Err()
}

// ReadRevision returns the revision of one version.
func (r *revisions) ReadRevision(ctx context.Context, version string) (*migrate.Revision, error) {
	var raw string
	err := r.conn.QueryRowContext(ctx, `SELECT revision FROM `+revisionsTable+` WHERE version = `+r.placeholder(1), version).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, migrate.ErrRevisionNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("read revision %s: %w", version, err)
	}
	rev, err := decodeRevision(raw)
	if err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", version, err)
	}
	return rev, nil
}

// WriteRevision inserts or replaces a revision.
func (r *revisions) WriteRevision(ctx context.Context, rev *migrate.Revision) error {
	raw, err := json.Marshal(rev)
	if err != nil {
		return err
	}
	if err := r.DeleteRevision(ctx, rev.Version); err != nil {
		return err
	}
	_, err = r.conn.ExecContext(ctx, `INSERT INTO `+revisionsTable+` (version, revision) VALUES (`+
		r.placeholder(1)+`, `+r.placeholder(2)+`)`, rev.Version, string(raw))
	if err != nil {
		return fmt.Errorf("write revision %s: %w", rev.Version, err)
	}
	return nil
}

// DeleteRevision removes a revision.
func (r *revisions) DeleteRevision(ctx context.Context, version string) error {
	_, err := r.conn.ExecContext(ctx, `DELETE FROM `+revisionsTable+` WHERE version = `+r.placeholder(1), version)
	if err != nil {
		return fmt.Errorf("delete revision %s: %w", version, err)
	}
	return nil
}

// revisionTypes maps the text Atlas writes for a revision type (its
// MarshalText) back to the type, which Atlas itself cannot decode: without
// this, every start on an already migrated database failed.
var revisionTypes = map[string]migrate.RevisionType{
	migrate.RevisionTypeBaseline.String():                                 migrate.RevisionTypeBaseline,
	migrate.RevisionTypeExecute.String():                                  migrate.RevisionTypeExecute,
	migrate.RevisionTypeResolved.String():                                 migrate.RevisionTypeResolved,
	(migrate.RevisionTypeExecute | migrate.RevisionTypeResolved).String(): migrate.RevisionTypeExecute | migrate.RevisionTypeResolved,
}

// decodeRevision reads a stored revision, its type written as text.
func decodeRevision(raw string) (*migrate.Revision, error) {
	rev := &migrate.Revision{}
	aux := struct {
		*migrate.Revision
		Type string `json:"Type"` // shadows Revision.Type
	}{Revision: rev}
	if err := json.Unmarshal([]byte(raw), &aux); err != nil {
		return nil, err
	}
	rev.Type = revisionTypes[aux.Type]
	return rev, nil
}
