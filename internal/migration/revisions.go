package migration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ariga.io/atlas/sql/migrate"
)

// revisionsTable records the applied migrations, one JSON-encoded Atlas
// revision per version.
const revisionsTable = "schema_revisions"

// storedRevision is a revision as kept in the table: every field, including
// the ones Atlas's own JSON form leaves out (hashes) or cannot read back (type).
type storedRevision struct {
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

func encodeRevision(r *migrate.Revision) ([]byte, error) {
	return json.Marshal(storedRevision{
		Version: r.Version, Description: r.Description, Type: uint(r.Type), Applied: r.Applied, Total: r.Total,
		ExecutedAt: r.ExecutedAt, ExecutionTime: r.ExecutionTime, Error: r.Error, ErrorStmt: r.ErrorStmt,
		Hash: r.Hash, PartialHashes: r.PartialHashes, OperatorVersion: r.OperatorVersion,
	})
}

func decodeRevision(raw string) (*migrate.Revision, error) {
	var s storedRevision
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, fmt.Errorf("decode revision: %w", err)
	}
	return &migrate.Revision{
		Version: s.Version, Description: s.Description, Type: migrate.RevisionType(s.Type), Applied: s.Applied, Total: s.Total,
		ExecutedAt: s.ExecutedAt, ExecutionTime: s.ExecutionTime, Error: s.Error, ErrorStmt: s.ErrorStmt,
		Hash: s.Hash, PartialHashes: s.PartialHashes, OperatorVersion: s.OperatorVersion,
	}, nil
}

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
			return nil, err
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
	return decodeRevision(raw)
}

// WriteRevision inserts or replaces a revision.
func (r *revisions) WriteRevision(ctx context.Context, rev *migrate.Revision) error {
	raw, err := encodeRevision(rev)
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
