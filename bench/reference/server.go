package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oklog/ulid/v2"
)

// keyRecheck is how long a key's state is trusted, as in the product.
const keyRecheck = 5 * time.Second

type viewer struct {
	userID string
	admin  bool
}

type keyState struct {
	userID, role string
	revoked      bool
	checked      time.Time
}

type server struct {
	st     *store
	log    *slog.Logger
	secret []byte
	parser *jwt.Parser

	mu   sync.RWMutex
	keys map[string]keyState
}

func newServer(st *store, secret []byte, log *slog.Logger) *server {
	return &server{
		st:     st,
		log:    log,
		secret: secret,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired()),
		keys:   map[string]keyState{},
	}
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/items", s.authed(s.list))
	mux.HandleFunc("POST /v1/items", s.authed(s.create))
	mux.HandleFunc("GET /v1/items/{id}", s.authed(s.get))
	mux.HandleFunc("PUT /v1/items/{id}", s.authed(s.update))
	return mux
}

// response carries what the access log needs back from a handler.
type response struct {
	http.ResponseWriter
	status int
	reqID  string
}

type handler func(w *response, r *http.Request, v viewer)

// authed gives every request a request id and an access-log line, and
// admits only a valid bearer token of a key that is not revoked.
func (s *server) authed(h handler) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &response{ResponseWriter: rw, reqID: strings.ToLower(ulid.Make().String())}
		w.Header().Set("X-Request-ID", w.reqID)
		v, ok := s.authenticate(r)
		if ok {
			h(w, r, v)
		} else {
			s.fail(w, http.StatusUnauthorized, "UNAUTHORIZED", "the access token is invalid")
		}
		s.log.Info("request", "request_id", w.reqID, "method", r.Method, "route", r.Pattern,
			"status", w.status, "duration_ms", float64(time.Since(start).Microseconds())/1000, "user_id", v.userID)
	}
}

func (s *server) authenticate(r *http.Request) (viewer, bool) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return viewer{}, false
	}
	var claims jwt.RegisteredClaims
	tok, err := s.parser.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return s.secret, nil })
	if err != nil {
		return viewer{}, false
	}
	kid, _ := tok.Header["kid"].(string)
	now := time.Now()
	s.mu.RLock()
	st, ok := s.keys[kid]
	s.mu.RUnlock()
	if !ok || now.Sub(st.checked) >= keyRecheck {
		userID, role, revoked, err := s.st.keyState(r.Context(), kid)
		if err != nil {
			return viewer{}, false
		}
		st = keyState{userID: userID, role: role, revoked: revoked, checked: now}
		s.mu.Lock()
		s.keys[kid] = st
		s.mu.Unlock()
	}
	if st.revoked || st.userID != claims.Subject {
		return viewer{}, false
	}
	return viewer{userID: st.userID, admin: st.role == "admin"}, true
}

type meta struct {
	Timestamp  string      `json:"timestamp"`
	RequestID  string      `json:"request_id"`
	Pagination *pagination `json:"pagination,omitempty"`
}

type pagination struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
}

func (s *server) write(w *response, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"success":false}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.status = status
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *server) ok(w *response, status int, data any, p *pagination) {
	s.write(w, status, struct {
		Success bool `json:"success"`
		Data    any  `json:"data"`
		Meta    meta `json:"meta"`
	}{true, data, meta{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), RequestID: w.reqID, Pagination: p}})
}

func (s *server) fail(w *response, status int, code, message string) {
	type errorBody struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	s.write(w, status, struct {
		Success bool      `json:"success"`
		Error   errorBody `json:"error"`
		Meta    meta      `json:"meta"`
	}{false, errorBody{code, message, map[string]any{}}, meta{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), RequestID: w.reqID}})
}

func (s *server) internal(w *response, r *http.Request, err error) {
	s.log.Error("request failed", "request_id", w.reqID, "err", err)
	s.fail(w, http.StatusInternalServerError, "INTERNAL_ERROR", "internal error")
}

// intParam reads a bounded integer query parameter.
func intParam(r *http.Request, name string, def, lo, hi int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= lo && n <= hi
}

func (s *server) list(w *response, r *http.Request, v viewer) {
	page, ok1 := intParam(r, "page", 1, 1, 1<<31-1)
	limit, ok2 := intParam(r, "limit", 20, 1, 100)
	if !ok1 || !ok2 {
		s.fail(w, http.StatusBadRequest, "VALIDATION_ERROR", "bad page or limit")
		return
	}
	items, total, err := s.st.page(r.Context(), v, limit, (page-1)*limit)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.ok(w, http.StatusOK, items, &pagination{Page: page, Limit: limit, Total: total, Pages: (total + limit - 1) / limit})
}

func (s *server) get(w *response, r *http.Request, v viewer) {
	it, err := s.st.get(r.Context(), s.st.db, v, r.PathValue("id"))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.fail(w, http.StatusNotFound, "NOT_FOUND", "item not found")
	case err != nil:
		s.internal(w, r, err)
	default:
		s.ok(w, http.StatusOK, it, nil)
	}
}

// itemBody is the body of POST and PUT; unknown fields are refused.
type itemBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

func decodeItem(r *http.Request) (itemBody, error) {
	var b itemBody
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, err
	}
	if b.Name != nil {
		name := strings.TrimSpace(*b.Name)
		if name == "" || len(name) > 200 {
			return b, errors.New("bad name")
		}
		b.Name = &name
	}
	if b.Description != nil && len(*b.Description) > 5000 {
		return b, errors.New("bad description")
	}
	return b, nil
}

func (s *server) create(w *response, r *http.Request, v viewer) {
	b, err := decodeItem(r)
	if err != nil || b.Name == nil {
		s.fail(w, http.StatusBadRequest, "VALIDATION_ERROR", "want a name")
		return
	}
	desc := ""
	if b.Description != nil {
		desc = *b.Description
	}
	it, err := s.st.create(r.Context(), v, *b.Name, desc)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/items/"+it.ID)
	s.ok(w, http.StatusCreated, it, nil)
}

func (s *server) update(w *response, r *http.Request, v viewer) {
	b, err := decodeItem(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "VALIDATION_ERROR", "bad body")
		return
	}
	it, err := s.st.update(r.Context(), v, r.PathValue("id"), b.Name, b.Description)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.fail(w, http.StatusNotFound, "NOT_FOUND", "item not found")
	case err != nil:
		s.internal(w, r, err)
	default:
		s.ok(w, http.StatusOK, it, nil)
	}
}
