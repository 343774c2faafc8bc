package httpapi

import (
	"bytes"
	"encoding/json"
)

// Both APIs refuse a request body that repeats a name within one object:
// REST's bodies (rest/decode.go) and GraphQL's POST bodies, variables
// included (graph/server/transport.go).

// DuplicateKey finds the first name that appears twice in one object of
// data, at any depth, and returns it as a field path (scopes, or
// outer.inner in a nested object). encoding/json keeps the last of equal
// names without a word, so {"scopes":["read"],"scopes":["read","write"]}
// would make a write key of a body that reads as a read-only one to
// anything that keeps the first (a proxy, a log, a reviewer).
//
// data is one JSON value that encoding/json has already accepted, so the
// scan checks no syntax: it walks the bytes once, keeping the names of the
// open object as slices of data (a body's objects are small; past
// smallObject names it keeps a set), and allocates nothing for a body
// without duplicates.
func DuplicateKey(data []byte) (string, bool) {
	_, name, dup := scanDuplicates(data, 0)
	return name, dup
}

// smallObject is how many names an object's scan compares one by one
// before it keeps them in a set.
const smallObject = 16

// scanDuplicates scans the value at data[i:] for a name repeated within one
// of its objects; it returns the index after the value, or the repeated
// name's path from this value down.
func scanDuplicates(data []byte, i int) (int, string, bool) {
	i = skipSpace(data, i)
	switch data[i] {
	case '{':
		var small [smallObject][]byte
		names := small[:0]
		var set map[string]bool
		i = skipSpace(data, i+1)
		if data[i] == '}' {
			return i + 1, "", false
		}
		for {
			end := stringEnd(data, i)
			name := data[i+1 : end-1]
			if bytes.IndexByte(name, '\\') >= 0 {
				var s string
				_ = json.Unmarshal(data[i:end], &s) // accepted by the decoder already
				name = []byte(s)
			}
			if seen(names, set, name) {
				return 0, string(name), true
			}
			switch {
			case set != nil:
				set[string(name)] = true
			case len(names) == smallObject:
				set = make(map[string]bool, 2*smallObject)
				for _, n := range names {
					set[string(n)] = true
				}
				set[string(name)] = true
			default:
				names = append(names, name)
			}
			i = skipSpace(data, end) + 1 // past the colon
			var inner string
			var dup bool
			if i, inner, dup = scanDuplicates(data, i); dup {
				return 0, string(name) + "." + inner, true
			}
			i = skipSpace(data, i)
			if data[i] == '}' {
				return i + 1, "", false
			}
			i = skipSpace(data, i+1) // past the comma
		}
	case '[':
		i = skipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, "", false
		}
		for {
			var inner string
			var dup bool
			if i, inner, dup = scanDuplicates(data, i); dup {
				return 0, inner, true
			}
			i = skipSpace(data, i)
			if data[i] == ']' {
				return i + 1, "", false
			}
			i++ // past the comma
		}
	case '"':
		return stringEnd(data, i), "", false
	default: // a number, true, false or null
		for i < len(data) && !endsLiteral(data[i]) {
			i++
		}
		return i, "", false
	}
}

// seen reports whether name is among an object's names so far: names while
// they are few, set after.
func seen(names [][]byte, set map[string]bool, name []byte) bool {
	if set != nil {
		return set[string(name)]
	}
	for _, n := range names {
		if bytes.Equal(n, name) {
			return true
		}
	}
	return false
}

// endsLiteral reports whether b ends a number or a literal.
func endsLiteral(b byte) bool {
	switch b {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// stringEnd is the index after the string that starts at data[i]: past
// the first quote not escaped by an odd run of backslashes.
func stringEnd(data []byte, i int) int {
	j := i + 1
	for {
		j += bytes.IndexByte(data[j:], '"')
		n := 0
		for p := j - 1; data[p] == '\\'; p-- { // data[i] is a quote: the run stops there
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipSpace is the index of the first byte at or after i that is not JSON
// whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}
