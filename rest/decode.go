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
	if name, dup := httpapi.DuplicateKey(data); dup {
		return nil, apperr.Validation(name, "appears more than once in the body: send each field once")
	}
	return obj, nil
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
