package rest

import (
	"encoding/json"
	"time"

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
