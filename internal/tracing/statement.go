package tracing

import (
	"context"
	"database/sql/driver"
	"strings"

	"github.com/XSAM/otelsql"
	"go.opentelemetry.io/otel/attribute"
)

// statement is what a span may tell of an SQL statement: its kind (SELECT,
// INSERT, …) and the table it names first, never its text beyond that, nor
// its arguments.
type statement struct{ kind, table string }

// txNames are the spans of transactions, which have no statement text.
var txNames = map[otelsql.Method]string{
	otelsql.MethodConnBeginTx: "BEGIN",
	otelsql.MethodTxCommit:    "COMMIT",
	otelsql.MethodTxRollback:  "ROLLBACK",
	otelsql.MethodConnPing:    "PING",
}

// spanName names a statement's span "KIND table" (OpenTelemetry's database
// conventions), or the kind alone when it names no table.
func spanName(_ context.Context, method otelsql.Method, query string) string {
	if name, ok := txNames[method]; ok {
		return name
	}
	st := parseStatement(query)
	if st.table == "" {
		return st.kind
	}
	return st.kind + " " + st.table
}

// statementAttributes are the span's db.operation.name and
// db.collection.name.
func statementAttributes(_ context.Context, method otelsql.Method, query string, _ []driver.NamedValue) []attribute.KeyValue {
	if name, ok := txNames[method]; ok {
		return []attribute.KeyValue{attribute.String("db.operation.name", name)}
	}
	st := parseStatement(query)
	attrs := []attribute.KeyValue{attribute.String("db.operation.name", st.kind)}
	if st.table != "" {
		attrs = append(attrs, attribute.String("db.collection.name", st.table))
	}
	return attrs
}

// parseStatement reads the kind and the first table of an SQL statement.
// The kind is the first word; the table is the word after the first FROM,
// INTO, UPDATE or JOIN, unquoted. Anything unexpected gives "SQL" or no
// table, never a piece of the text that could hold a value.
func parseStatement(query string) statement {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '(' || r == ')' || r == ',' || r == ';'
	})
	if len(words) == 0 {
		return statement{kind: "SQL"}
	}
	st := statement{kind: strings.ToUpper(words[0])}
	if !isWord(st.kind) {
		st.kind = "SQL"
	}
	for i, w := range words[:len(words)-1] {
		switch strings.ToUpper(w) {
		case "FROM", "INTO", "UPDATE", "JOIN":
			if t := unquote(words[i+1]); isWord(t) && !subquery[strings.ToUpper(t)] {
				st.table = t
				return st
			}
		}
	}
	return st
}

// subquery are the words after FROM that open a subquery: the table is
// the subquery's.
var subquery = map[string]bool{"SELECT": true, "WITH": true, "LATERAL": true, "VALUES": true}

// unquote strips the identifier quotes of SQLite and PostgreSQL.
func unquote(s string) string {
	return strings.Trim(s, "\"`[]")
}

// isWord reports an SQL keyword or identifier: letters, digits, _ and .,
// never a literal or a placeholder.
func isWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return !(s[0] >= '0' && s[0] <= '9')
}
