package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/rest"
)

// Contract checks requests and responses of /v1 against the OpenAPI document
// the server publishes (rest/openapi/openapi.json), so that the document
// cannot drift from the code: Env.Do runs it on every /v1 exchange.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadContract loads and validates the OpenAPI document.
func LoadContract(ctx context.Context) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rest.OpenAPI())
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("OpenAPI document is invalid: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("OpenAPI router: %w", err)
	}
	return &Contract{doc: doc, router: router}, nil
}

// Check validates one exchange: the response must be one the document
// describes for its operation, and a request the document refuses must have
// been refused (4xx). An exchange the document has no operation for fails,
// unless the server agrees that there is none: a path the document lacks
// answered 404 "route not found", a method it lacks answered 405 with an
// Allow header naming exactly the document's methods of that path, or a CORS
// preflight of a documented path (the CORS layer answers those for every
// route; OpenAPI does not describe them).
func (c *Contract) Check(ctx context.Context, method, target string, reqHeader http.Header, reqBody []byte, res *Response) error {
	req := httptest.NewRequest(method, target, bytes.NewReader(reqBody))
	req.Header = reqHeader.Clone()
	if len(reqBody) > 0 && req.Header.Get("Content-Type") == "" {
		// The server reads a body without a Content-Type as JSON (DESIGN §3
		// refuses only other types), which OpenAPI cannot say: check it as
		// the JSON it is taken for.
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, ferr := c.router.FindRoute(req)
	if ferr != nil {
		return c.checkUndocumented(req, res, ferr)
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    requireBearer,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if rerr := openapi3filter.ValidateRequest(ctx, in); rerr != nil && res.Status < 400 {
		return fmt.Errorf("the document refuses this request, but the server answered %d: %w", res.Status, rerr)
	}
	return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options:                opts,
	})
}

// checkUndocumented judges an exchange for which the document has no
// operation (ferr says why): it passes only when the server too says the
// route or method does not exist, so a route served but not documented
// fails every test that reaches it.
func (c *Contract) checkUndocumented(req *http.Request, res *Response, ferr error) error {
	path := req.URL.Path
	switch {
	case errors.Is(ferr, routers.ErrPathNotFound):
		if res.Status == http.StatusNotFound {
			// The router's own message tells its answer to an unknown route
			// from a handler's 404 about a missing resource.
			if err := c.checkFailure(res, apperr.CodeNotFound, apperr.NotFound("route").Message); err != nil {
				return fmt.Errorf("path %s is not in the OpenAPI document and the server's 404 is not its unknown-route answer: %w", path, err)
			}
			return nil
		}
		return fmt.Errorf("path %s is not in the OpenAPI document, but the server serves it (%d): document it in rest/openapi/openapi.json", path, res.Status)
	case errors.Is(ferr, routers.ErrMethodNotAllowed):
		documented := c.methods(path)
		if isPreflight(req) && res.Status == http.StatusNoContent {
			return nil
		}
		if res.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s %s is not in the OpenAPI document (it has %s), but the server serves it (%d): document it in rest/openapi/openapi.json",
				req.Method, path, strings.Join(documented, ", "), res.Status)
		}
		if err := c.checkFailure(res, apperr.CodeMethodNotAllowed, ""); err != nil {
			return fmt.Errorf("%s %s: the 405 answer: %w", req.Method, path, err)
		}
		if allow := splitAllow(res.Header.Get("Allow")); !slices.Equal(allow, documented) {
			return fmt.Errorf("%s %s: the server allows %s, the OpenAPI document has %s: document every method the server serves",
				req.Method, path, strings.Join(allow, ", "), strings.Join(documented, ", "))
		}
		return nil
	default:
		return fmt.Errorf("find route of %s %s: %w", req.Method, path, ferr)
	}
}

// methods lists, sorted, the methods the document has for a path.
func (c *Contract) methods(path string) []string {
	var out []string
	for _, m := range []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"} {
		r := httptest.NewRequest(m, path, nil)
		if _, _, err := c.router.FindRoute(r); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// splitAllow reads an Allow header as a sorted list of methods.
func splitAllow(h string) []string {
	var out []string
	for _, m := range strings.Split(h, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, strings.ToUpper(m))
		}
	}
	slices.Sort(out)
	return out
}

// isPreflight tells a CORS preflight request.
func isPreflight(req *http.Request) bool {
	return req.Method == http.MethodOptions && req.Header.Get("Origin") != "" && req.Header.Get("Access-Control-Request-Method") != ""
}

// checkFailure validates a body against the document's failure envelope
// and requires its error code and, unless message is "", its message.
func (c *Contract) checkFailure(res *Response, code apperr.Code, message string) error {
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		return fmt.Errorf("error response is not JSON: %w", err)
	}
	if err := c.doc.Components.Schemas["Failure"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return err
	}
	var f struct {
		Error struct {
			Code    apperr.Code `json:"code"`
			Message string      `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res.Body, &f); err != nil {
		return fmt.Errorf("read error response: %w", err)
	}
	if f.Error.Code != code || (message != "" && f.Error.Message != message) {
		return fmt.Errorf("error %s %q, want %s %q", f.Error.Code, f.Error.Message, code, message)
	}
	return nil
}

// requireBearer holds a request to the document's bearerAuth scheme: it must
// carry a bearer token (whether the token is good is the server's to say).
func requireBearer(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if scheme, tok, ok := strings.Cut(h, " "); !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return errors.New("no bearer token")
	}
	return nil
}

// AssertContract checks one exchange under /v1 that a test made without an
// Env (its own handler, a real listener) against the OpenAPI document.
// Exchanges outside /v1 (health, metrics, GraphQL) are not the document's
// and pass unchecked, as in Env.Do.
func AssertContract(t testing.TB, method, target string, reqHeader http.Header, reqBody []byte, res *Response) {
	t.Helper()
	if u, err := url.Parse(target); err == nil && !strings.HasPrefix(u.Path, "/v1/") {
		return
	}
	c, err := LoadContract(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	reportContract(t, c, method, target, reqHeader, reqBody, res)
}

func reportContract(t testing.TB, c *Contract, method, target string, reqHeader http.Header, reqBody []byte, res *Response) {
	t.Helper()
	if err := c.Check(context.Background(), method, target, reqHeader, reqBody, res); err != nil {
		t.Errorf("OpenAPI contract: %s %s answered %d, which rest/openapi/openapi.json does not allow:\n%v\nbody: %s",
			method, target, res.Status, err, res.Body)
	}
}

// checkContract runs the contract on an exchange of Env.Do under /v1.
func (e *Env) checkContract(req *http.Request, reqBody []byte, res *Response) {
	if _, fuzz := e.T.(*testing.F); fuzz || !strings.HasPrefix(req.URL.Path, "/v1/") {
		// Inside a fuzz target the Env's T is the *testing.F, which may not
		// be used there; fuzz targets check the envelope themselves.
		return
	}
	e.T.Helper()
	var err error
	e.contractOnce.Do(func() { e.contract, err = LoadContract(context.Background()) })
	if e.contract == nil {
		e.T.Fatalf("load the OpenAPI contract: %v", err)
	}
	reportContract(e.T, e.contract, req.Method, req.URL.RequestURI(), req.Header, reqBody, res)
}
