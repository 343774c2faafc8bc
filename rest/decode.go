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
	"slices"
	"strings"

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

// allow refuses any field not in accepted, and drops the ignored ones
// (read-only fields a client may send back as it got them).
func (o object) allow(accepted []string, ignored ...string) error {
	for _, name := range slices.Sorted(maps.Keys(o)) {
		if slices.Contains(ignored, name) {
			delete(o, name)
			continue
		}
		if !slices.Contains(accepted, name) {
			return apperr.Validation(name, "is not a field of this request")
		}
	}
	return nil
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
