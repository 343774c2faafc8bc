package rest

import (
	"encoding/json"

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
