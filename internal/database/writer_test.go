package database

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointTruncatesLog: the connections leave checkpoints to the
// background loop, with a size limit on the log; one round of the loop over a
// log past its bound leaves the log empty and the rows in the database.
func TestCheckpointTruncatesLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	db, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.ckpt.close() // rounds run only when the test asks
	db.ckpt.max = 64 << 10

	for _, p := range []struct {
		pragma string
		want   int64
	}{{"wal_autocheckpoint", 0}, {"journal_size_limit", journalSizeLimit}} {
		var got int64
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil || got != p.want {
			t.Fatalf("%s = %d (%v), want %d", p.pragma, got, err, p.want)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	const rows = 64
	for range rows {
		if _, err := db.SQL.ExecContext(ctx, "INSERT INTO t VALUES (?)", strings.Repeat("x", 8<<10)); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if n := walSize(); n <= db.ckpt.max {
		t.Fatalf("log holds %d bytes after the writes; the test needs more than %d", n, db.ckpt.max)
	}
	if err := db.ckpt.checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := walSize(); n != 0 {
		t.Fatalf("log holds %d bytes after the checkpoint, want 0", n)
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != rows {
		t.Fatalf("count = %d (%v), want %d", n, err, rows)
	}
}
