package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/httpapi"
)

// object is a request body decoded one level deep: each field stays raw
// until its handler decodes it to the type it wants, so that a wrong type is
// reported by field name.
type object map[string]json.RawMessage

// decodeObject reads the request body as exactly one JSON object.
func decodeObject(c *gin.Context) (object, error) {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, apperr.New(apperr.CodePayloadTooLarge, fmt.Sprintf("the request body exceeds %d bytes", httpapi.MaxBodyBytes))
		}
		return nil, apperr.Validation("body", "could not be read")
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, apperr.Validation("body", "must be a JSON object")
	}
	if data[0] != '{' {
		return nil, apperr.Validation("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj object
	if err := dec.Decode(&obj); err != nil {
		return nil, apperr.Validation("body", "malformed JSON: "+jsonReason(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apperr.Validation("body", "must hold a single JSON object")
	}
	if name, dup := duplicateKey(data); dup {
		return nil, apperr.Validation(name, "appears more than once in the body: send each field once")
	}
	return obj, nil
}

// duplicateKey finds the first name that appears twice in one object of
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
func duplicateKey(data []byte) (string, bool) {
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

// jsonReason describes a decoding error without echoing the input.
func jsonReason(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return "not valid JSON"
}

// allow refuses any field not in accepted or readOnly.
func (o object) allow(accepted []string, readOnly ...string) error {
	for _, name := range slices.Sorted(maps.Keys(o)) {
		if !slices.Contains(accepted, name) && !slices.Contains(readOnly, name) {
			return apperr.Validation(name, "is not a field of this request")
		}
	}
	return nil
}

// readOnly are the fields of a resource that a PUT may carry but not
// change, so that a client may PUT back what it got (DESIGN §3) without
// believing it changed what it cannot.
type readOnly struct {
	// fixed never change (an id, an owner, an email, a creation time, a
	// key's scopes): sent with the value the resource has, they are
	// accepted; with another, refused naming the field.
	fixed []string
	// kept are the server's to move (updated_at, last_used_at, a webhook's
	// failure count): they may change between a client's GET and its PUT,
	// so any value is accepted and none is applied.
	kept []string
	// reason follows "is read-only" in a refusal: what to do instead.
	reason string
}

// all is every read-only field, for allow.
func (r readOnly) all() []string { return slices.Concat(r.fixed, r.kept) }

// check compares the fixed fields the body carries with the resource as
// current renders it now (what a GET answers), and removes every read-only
// field from the body. current runs only when the body carries a fixed
// field: a PUT of settable fields alone reads nothing more.
func (o object) check(r readOnly, current func() (any, error)) error {
	var sent []string
	for _, name := range r.fixed {
		if _, ok := o[name]; ok {
			sent = append(sent, name)
		}
	}
	if len(sent) > 0 {
		res, err := current()
		if err != nil {
			return err
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return err
		}
		var now object
		if err := json.Unmarshal(raw, &now); err != nil {
			return err
		}
		slices.Sort(sent)
		for _, name := range sent {
			if !sameJSON(o[name], now[name]) {
				return apperr.Validation(name, "is read-only"+r.reason)
			}
		}
	}
	for _, name := range r.all() {
		delete(o, name)
	}
	return nil
}

// sameJSON reports whether two JSON values are equal as values: a missing
// one is null, numbers compare by value, and two strings that are both RFC
// 3339 timestamps compare as times (2026-01-02T03:04:05Z is
// 2026-01-02T04:04:05+01:00).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) == 0 {
		a = json.RawMessage("null")
	}
	if len(b) == 0 {
		b = json.RawMessage("null")
	}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	if sa, ok := va.(string); ok {
		if sb, ok := vb.(string); ok && sa != sb {
			ta, errA := time.Parse(time.RFC3339Nano, sa)
			tb, errB := time.Parse(time.RFC3339Nano, sb)
			return errA == nil && errB == nil && ta.Equal(tb)
		}
	}
	return reflect.DeepEqual(va, vb)
}

// str returns a string field, nil when absent.
func (o object) str(name string) (*string, error) {
	raw, ok := o[name]
	if !ok {
		return nil, nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return nil, apperr.Validation(name, "must be a string")
	}
	return s, nil
}

// requireJSON answers 415 to a request whose body is declared as anything
// but JSON. A body without a Content-Type is read as JSON.
func requireJSON(c *gin.Context) {
	ct := c.GetHeader("Content-Type")
	if ct == "" {
		c.Next()
		return
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		renderError(c, apperr.New(apperr.CodeUnsupportedMedia, "the request body must be application/json"))
		return
	}
	c.Next()
}
