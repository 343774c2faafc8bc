package logging

import (
	"net/url"
	"strings"
)

// URLRedacted replaces a credential in a URL: its userinfo and each query
// value, as OpenTelemetry's semantic conventions do for url.full.
const URLRedacted = "REDACTED"

// RedactURL returns raw with the credentials a URL may carry redacted: a
// user and password (https://REDACTED:REDACTED@host/), and the value of each
// query parameter, its name and order kept (?token=REDACTED&v=REDACTED).
// Webhook URLs carry their receiver's credentials this way; only their owner
// sees them whole (the webhook's own API), and what others may read (audit
// records, trace spans, delivery errors, logs) gets this form. Text that does
// not parse as a URL is returned whole: no webhook URL is such text.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.User == nil && u.RawQuery == "") {
		return raw
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(URLRedacted, URLRedacted)
		} else {
			u.User = url.User(URLRedacted)
		}
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, p := range params {
			if name, value, ok := strings.Cut(p, "="); ok && value != "" {
				params[i] = name + "=" + URLRedacted
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.String()
}
