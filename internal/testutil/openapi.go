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
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

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
// been refused (4xx). Exchanges of operations the document lacks are
// reported as skipped (skip != ""): their failures must still be the error
// envelope.
func (c *Contract) Check(ctx context.Context, method, target string, reqHeader http.Header, reqBody []byte, res *Response) (skip string, err error) {
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
		var re *routers.RouteError
		if !errors.As(ferr, &re) {
			return "", fmt.Errorf("find route: %w", ferr)
		}
		if res.Status >= 400 {
			return "not in the OpenAPI document; checked as an error envelope only", c.checkFailure(res)
		}
		return "not in the OpenAPI document: " + re.Error(), nil
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    requireBearer,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if rerr := openapi3filter.ValidateRequest(ctx, in); rerr != nil && res.Status < 400 {
		return "", fmt.Errorf("the document refuses this request, but the server answered %d: %w", res.Status, rerr)
	}
	return "", openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options:                opts,
	})
}

// checkFailure validates a body against the document's failure envelope.
func (c *Contract) checkFailure(res *Response) error {
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		return fmt.Errorf("error response is not JSON: %w", err)
	}
	return c.doc.Components.Schemas["Failure"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
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
func AssertContract(t testing.TB, method, target string, reqHeader http.Header, reqBody []byte, res *Response) {
	t.Helper()
	c, err := LoadContract(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	reportContract(t, c, method, target, reqHeader, reqBody, res)
}

func reportContract(t testing.TB, c *Contract, method, target string, reqHeader http.Header, reqBody []byte, res *Response) {
	t.Helper()
	skip, err := c.Check(context.Background(), method, target, reqHeader, reqBody, res)
	if err != nil {
		t.Errorf("OpenAPI contract: %s %s answered %d, which rest/openapi/openapi.json does not allow:\n%v\nbody: %s",
			method, target, res.Status, err, res.Body)
	}
	if skip != "" {
		t.Logf("OpenAPI contract: %s %s: %s", method, target, skip)
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
	if e.contract == nil {
		c, err := LoadContract(context.Background())
		if err != nil {
			e.T.Fatalf("%v", err)
		}
		e.contract = c
	}
	reportContract(e.T, e.contract, req.Method, req.URL.RequestURI(), req.Header, reqBody, res)
}
