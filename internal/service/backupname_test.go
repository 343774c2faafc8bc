package service

import (
	"regexp"
	"strings"
	"testing"
)

// TestBackupNameIsItsPattern: validBackupName accepts exactly the names of
// the pattern it writes out.
func TestBackupNameIsItsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,195}\.db$`)
	names := []string{
		"", ".db", "a.db", "A.db", "0.db", "backup-20261202T071800.000Z.db", "a.b.db", "a.db.db",
		"a_b-c.db", ".hidden.db", "-a.db", "_a.db", "a/b.db", "../a.db", "a\\b.db", "a b.db",
		"a.DB", "a.db ", "a.dbx", "a.sqlite", "é.db", "a\x00.db", "a.db\n", "ab", "a.d",
		"a" + strings.Repeat("b", 195) + ".db", "a" + strings.Repeat("b", 196) + ".db",
		strings.Repeat("x", 196) + ".db", strings.Repeat("x", 197) + ".db",
	}
	for _, n := range names {
		if got, want := validBackupName(n), pattern.MatchString(n); got != want {
			t.Errorf("validBackupName(%q) = %v, the pattern says %v", n, got, want)
		}
	}
}
