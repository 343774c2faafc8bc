package rest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/apperr"
)

// strs returns a field holding an array of strings, nil when absent.
func (o object) strs(name string) (*[]string, error) {
	raw, ok := o[name]
	if !ok {
		return nil, nil
	}
	var ss *[]string
	if err := json.Unmarshal(raw, &ss); err != nil || ss == nil {
		return nil, apperr.Validation(name, "must be an array of strings")
	}
	return ss, nil
}

// boolean returns a true/false field, nil when absent.
func (o object) boolean(name string) (*bool, error) {
	raw, ok := o[name]
	if !ok {
		return nil, nil
	}
	var b *bool
	if err := json.Unmarshal(raw, &b); err != nil || b == nil {
		return nil, apperr.Validation(name, "must be true or false")
	}
	return b, nil
}

// timestamp returns an RFC 3339 date-time field, nil when absent.
func (o object) timestamp(name string) (*time.Time, error) {
	raw, ok := o[name]
	if !ok {
		return nil, nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil {
		return nil, apperr.Validation(name, "must be an RFC 3339 timestamp, such as 2026-11-20T08:00:00Z")
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, apperr.Validation(name, "must be an RFC 3339 timestamp, such as 2026-11-20T08:00:00Z")
	}
	return &t, nil
}

// body names the fields of a resource's request bodies (generated for the
// writable resources into inputs.generated.go): those a client may set on
// create and on update, and the read-only ones an update may carry back.
type body struct {
	create, update []string
	readOnly       readOnly
}

// sendBack follows "is read-only" when a client changed a field it may
// only send back as it read it.
const sendBack = ": send it as it was read, or leave it out"

// decodeRequired decodes a field that must be present and not null.
func decodeRequired[T any](o object, name string, dst *T) error {
	if _, ok := o[name]; !ok {
		return apperr.Validation(name, "is required")
	}
	return decodeOptional(o, name, dst, nil)
}

// decodeOptional decodes a field into dst when present. null sets *clear
// (an optional field of an update: null clears it), or with clear nil is
// refused, as any value not of dst's type, naming the field and the type
// it takes.
func decodeOptional[T any](o object, name string, dst *T, clear *bool) error {
	raw, ok := o[name]
	if !ok {
		return nil
	}
	if clear != nil && bytes.Equal(raw, []byte("null")) {
		*clear = true
		return nil
	}
	var v T
	if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &v) != nil {
		return apperr.Validation(name, "must be "+describe(reflect.TypeFor[T]()))
	}
	*dst = v
	return nil
}

// describe says what values of t a body takes, for an error message.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "an RFC 3339 timestamp, such as 2026-11-20T08:00:00Z"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "an array of strings"
	}
	return "a " + t.String()
}

// decode reads a request body of the resource: on create (current nil) its
// settable fields only; on update also its read-only ones, checked against
// the resource as current renders it and then dropped.
func (b body) decode(c *gin.Context, current func() (any, error)) (object, error) {
	o, err := decodeObject(c)
	if err != nil {
		return nil, err
	}
	settable, ro := b.update, b.readOnly
	if current == nil {
		settable, ro = b.create, readOnly{}
	}
	if err := o.allow(settable, ro.all()...); err != nil {
		return nil, err
	}
	if err := o.check(ro, current); err != nil {
		return nil, err
	}
	return o, nil
}
