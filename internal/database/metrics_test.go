package database_test

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestDatabaseMetrics: the database's gauges on /metrics. Ready is 1 while
// the database answers and 0 once it does not; an SQLite file's
// write-ahead log size is its -wal file's, after a write more than 0, and
// PostgreSQL has no such gauge.
func TestDatabaseMetrics(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testutil.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	db.RegisterMetrics(set)
	gauge := func(name string) (float64, bool) {
		var b bytes.Buffer
		set.WritePrometheus(&b)
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b.Bytes())
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v, true
	}
	if v, ok := gauge("itemsvc_database_ready"); !ok || v != 1 {
		t.Errorf("itemsvc_database_ready = %v (exported %v), want 1", v, ok)
	}
	wal, ok := gauge("itemsvc_sqlite_wal_bytes")
	switch {
	case db.Dialect == "sqlite" && (!ok || wal <= 0):
		t.Errorf("itemsvc_sqlite_wal_bytes = %v (exported %v) after the migrations' writes, want more than 0", wal, ok)
	case db.Dialect != "sqlite" && ok:
		t.Errorf("itemsvc_sqlite_wal_bytes exported on %s", db.Dialect)
	}
	db.SQL.Close() // the pool stops answering
	if v, _ := gauge("itemsvc_database_ready"); v != 0 {
		t.Errorf("itemsvc_database_ready = %v with the pool closed, want 0", v)
	}
}
