// Package apperr is the one error type of the API: the codes of the contract,
// their HTTP statuses, safe messages, and the mapping from any error (ent's
// included) to it. REST renders an *Error as the failure envelope, GraphQL as
// extensions.code, so the same failure has the same code on both.
package apperr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/privacy"
)

// Code is an error code of the contract (DESIGN §3).
type Code string

// The error codes.
const (
	CodeValidation       Code = "VALIDATION_ERROR"
	CodeInvalidAPIKey    Code = "INVALID_API_KEY"
	CodeTokenExpired     Code = "TOKEN_EXPIRED"
	CodeUnauthorized     Code = "UNAUTHORIZED"
	CodePermissionDenied Code = "PERMISSION_DENIED"
	CodeNotFound         Code = "NOT_FOUND"
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	CodePayloadTooLarge  Code = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMedia Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeRateLimited      Code = "RATE_LIMITED"
	CodeInternal         Code = "INTERNAL_ERROR"
	CodeUnavailable      Code = "UNAVAILABLE"
	// CodeSlowConsumer ends an event stream whose client fell too far
	// behind; it resumes from the last event it got.
	CodeSlowConsumer Code = "SLOW_CONSUMER"
	// CodeCursorExpired refuses an event cursor from before the retained
	// history (EVENT_RETENTION): the events after it may be gone, and
	// resuming from it would skip them without a word.
	CodeCursorExpired Code = "CURSOR_EXPIRED"
	// CodeIdempotencyKeyInUse refuses a retry while the first request with
	// its Idempotency-Key still runs (409, Retry-After).
	CodeIdempotencyKeyInUse Code = "IDEMPOTENCY_KEY_IN_USE"
	// CodeIdempotencyKeyReused refuses an Idempotency-Key sent again with a
	// different request (422).
	CodeIdempotencyKeyReused Code = "IDEMPOTENCY_KEY_REUSED"
	// CodePreconditionFailed refuses a change conditioned on a version of
	// the item (If-Match, GraphQL ifMatch) that is no longer current: the
	// change is not made, so no one's edit is overwritten unseen.
	CodePreconditionFailed Code = "PRECONDITION_FAILED"
	// CodeNotSupported refuses an operation this server cannot do with the
	// way it is set up, whoever asks and however often (backups in the
	// browser on PostgreSQL, whose own tools make them): 501, not retried.
	CodeNotSupported Code = "NOT_SUPPORTED"
)

var statuses = map[Code]int{
	CodeValidation:       http.StatusBadRequest,
	CodeInvalidAPIKey:    http.StatusUnauthorized,
	CodeTokenExpired:     http.StatusUnauthorized,
	CodeUnauthorized:     http.StatusUnauthorized,
	CodePermissionDenied: http.StatusForbidden,
	CodeNotFound:         http.StatusNotFound,
	CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	CodePayloadTooLarge:  http.StatusRequestEntityTooLarge,
	CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	CodeRateLimited:      http.StatusTooManyRequests,
	CodeInternal:         http.StatusInternalServerError,
	CodeUnavailable:      http.StatusServiceUnavailable,
	CodeSlowConsumer:     http.StatusServiceUnavailable,
	CodeCursorExpired:    http.StatusGone,

	CodeIdempotencyKeyInUse:  http.StatusConflict,
	CodeIdempotencyKeyReused: http.StatusUnprocessableEntity,
	CodePreconditionFailed:   http.StatusPreconditionFailed,
	CodeNotSupported:         http.StatusNotImplemented,
}

// Error is a failure as the client sees it. Message is safe to show; Cause,
// if any, is for the logs only.
//
// An error about one input names it in Details["field"], by the service's
// name for it: the ent field's (snake_case: expires_at, user_id), or HTTP's
// for what HTTP defines (If-Match). REST shows that name as it is; GraphQL
// spells it as its arguments are spelled (graph.FieldName), through
// Renamed, which words the message anew.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Cause   error
	// message words Message for a field's name; nil when the error names
	// no field.
	message func(field string) string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Status is the HTTP status of the error's code.
func (e *Error) Status() int {
	if s, ok := statuses[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Renamed is e naming its field as field, its message worded anew, its
// other details kept; e itself when it names no field or already that one.
func (e *Error) Renamed(field string) *Error {
	if e.message == nil || e.Field() == field {
		return e
	}
	out := *e
	out.Details = make(map[string]any, len(e.Details))
	for k, v := range e.Details {
		out.Details[k] = v
	}
	out.Details["field"] = field
	out.Message = e.message(field)
	return &out
}

// Field is the name of the input e is about, or "".
func (e *Error) Field() string {
	f, _ := e.Details["field"].(string)
	return f
}

// New returns an error with a code and a message.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message, Details: map[string]any{}}
}

// Validation reports a bad value of one field (a body field or a parameter).
func Validation(field, reason string) *Error {
	message := func(field string) string { return fmt.Sprintf("invalid %s: %s", field, reason) }
	return &Error{
		Code:    CodeValidation,
		Message: message(field),
		Details: map[string]any{"field": field, "reason": reason},
		message: message,
	}
}

// NotFound reports a resource that does not exist (or that the caller may
// not learn exists).
func NotFound(what string) *Error {
	return New(CodeNotFound, what+" not found")
}

// PermissionDenied reports a resource the caller may not access.
func PermissionDenied(message string) *Error {
	return New(CodePermissionDenied, message)
}

// CursorExpired reports an event cursor, named by field, older than the
// retained history (retention, EVENT_RETENTION). The message tells the
// client how to start again, since no cursor can resume it.
func CursorExpired(field string, retention time.Duration) *Error {
	message := func(field string) string {
		return fmt.Sprintf("the event named by %s is older than the event history kept (%s), "+
			"so events after it may be gone: re-read the items, then follow the events from the newest one", field, retention)
	}
	return &Error{
		Code:    CodeCursorExpired,
		Message: message(field),
		Details: map[string]any{"field": field, "retention": retention.String()},
		message: message,
	}
}

// PreconditionFailed reports a change refused because the item has moved
// past every version that field (If-Match, ifMatch) named.
func PreconditionFailed(field string) *Error {
	message := func(field string) string {
		return fmt.Sprintf("the item has changed since the version named by %s; "+
			"read it again, merge, and retry with its new ETag", field)
	}
	return &Error{
		Code:    CodePreconditionFailed,
		Message: message(field),
		Details: map[string]any{"field": field},
		message: message,
	}
}

// Unauthorized reports a request without a valid access token.
func Unauthorized(message string) *Error {
	return New(CodeUnauthorized, message)
}

// Internal wraps an unexpected error; its text never reaches the client.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, Message: "internal error", Details: map[string]any{}, Cause: cause}
}

// Unavailable reports that a dependency (the database) cannot be reached.
func Unavailable(cause error) *Error {
	return &Error{Code: CodeUnavailable, Message: "service temporarily unavailable", Details: map[string]any{}, Cause: cause}
}

// Storage reports a database that cannot take writes (IsStorage).
func Storage(cause error) *Error {
	return &Error{Code: CodeUnavailable, Message: "the database cannot take writes right now; retry later", Details: map[string]any{"reason": "storage"}, Cause: cause}
}

// Timeout reports a request that ran out of its time (REQUEST_TIMEOUT): its
// database work was cancelled, and a transaction still open rolled back.
func Timeout(cause error) *Error {
	return &Error{Code: CodeUnavailable, Message: "the request did not finish within its time limit; retry, or ask for less", Details: map[string]any{"reason": "timeout"}, Cause: cause}
}

// FromRequest is From for an error met while serving a request whose
// context is ctx: once the request's deadline has passed, whatever the
// driver made of the cancellation ("interrupted", a closed connection) is
// the Timeout it stands for.
func FromRequest(ctx context.Context, err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Timeout(err)
	}
	return From(err)
}

// From maps any error to an *Error: an *Error passes through, ent's not-found
// becomes NOT_FOUND, a privacy denial PERMISSION_DENIED, ent validation
// VALIDATION_ERROR, a cancelled or timed-out operation and an unreachable,
// full or read-only database UNAVAILABLE, anything else INTERNAL_ERROR with
// the cause kept for the log.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ve *ent.ValidationError
	switch {
	case ent.IsNotFound(err):
		return NotFound("resource")
	case errors.Is(err, privacy.Deny):
		return PermissionDenied("permission denied")
	case errors.As(err, &ve):
		// ent words it "ent: validator failed for field "User.email": …":
		// the client gets the validator's own reason.
		reason := ve.Unwrap()
		if inner := errors.Unwrap(reason); inner != nil {
			reason = inner
		}
		return Validation(ve.Name, reason.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), isConnectionError(err):
		// Work cut short (its own deadline, or a client that left) is no
		// fault in the code: the client may retry.
		return Unavailable(err)
	case IsStorage(err):
		return Storage(err)
	default:
		return Internal(err)
	}
}

// IdempotencyKeyInUse refuses a request whose Idempotency-Key another
// request (the first with it) is still working on: the client retries after
// retryAfter seconds (Retry-After) and then gets that request's response.
func IdempotencyKeyInUse(retryAfter int) *Error {
	return &Error{
		Code:    CodeIdempotencyKeyInUse,
		Message: fmt.Sprintf("a request with this Idempotency-Key is still in progress; retry after %d seconds", retryAfter),
		Details: map[string]any{"retry_after": retryAfter},
	}
}

// IdempotencyKeyReused refuses an Idempotency-Key already used (by the same
// user, within its lifetime) for a different request: the key names one
// request, and replaying its response to another would be a lie.
func IdempotencyKeyReused() *Error {
	return New(CodeIdempotencyKeyReused, "this Idempotency-Key was already used for a different request; use a new key for a new request")
}
