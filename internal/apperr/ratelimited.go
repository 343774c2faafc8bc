package apperr

import "fmt"

// RateLimited reports an exhausted rate-limit window. reason says whose
// budget ran out; details carry the window, its limit and the seconds to
// wait (also sent as Retry-After), so a client can back off without parsing
// the message.
func RateLimited(reason, window string, limit, retryAfter int64) *Error {
	return &Error{
		Code:    CodeRateLimited,
		Message: fmt.Sprintf("%s: the limit is %d per %s; retry after %d seconds", reason, limit, window, retryAfter),
		Details: map[string]any{"window": window, "limit": limit, "retry_after": retryAfter},
	}
}
